// counterpoint/scoring/float16.h: IEEE binary16 storage of embedding rows (an index may keep Es
// as half to halve its memory): conversion both ways.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "counterpoint/core/matrix.h"

namespace counterpoint::scoring {

// IEEE 754 binary16 conversion, round to nearest even; overflow gives +/-Inf, NaN stays NaN.
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);
// Converts a whole matrix to n * d half values (row-major), e.g. for an index that stores Es.
std::vector<std::uint16_t> to_half(MatrixView m);
// Decodes `count` consecutive half values into floats (vectorised; same values as half_to_float).
void half_rows_to_float(const std::uint16_t* values, std::size_t count, float* out);

}  // namespace counterpoint::scoring
