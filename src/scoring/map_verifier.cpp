#include "counterpoint/scoring/map_verifier.h"

namespace counterpoint::scoring {

MapVerifier::~MapVerifier() = default;

}  // namespace counterpoint::scoring
