// Fuzzes the polarity inverter (text/inversion.h) on arbitrary text with every edit kind, in an
// order picked by byte 0. An edit must change the text and keep it valid UTF-8; invalid UTF-8 must
// throw InvalidArgument; nothing else may escape or crash (WordNet look-ups included).
#include <cstdint>
#include <string>
#include <vector>

#include "counterpoint/core/errors.h"
#include "counterpoint/text/inversion.h"
#include "fuzz_support.h"

namespace text = counterpoint::text;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const std::vector<text::EditKind> kinds = text::all_edit_kinds();
  // Byte 0 rotates the list, so each kind is tried first for some inputs.
  std::vector<text::EditKind> order;
  for (std::size_t i = 0; i < kinds.size(); ++i) order.push_back(kinds[(data[0] + i) % kinds.size()]);
  const text::Inverter inverter(text::InverterOptions{order});
  const std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (const auto inversion = inverter.invert(input)) {
      FUZZ_CHECK(inversion->text != input);
      // The edit's output is text too: inverting it again must not throw.
      (void)inverter.invert(inversion->text);
    }
  } catch (const counterpoint::InvalidArgument&) {
  }
  return 0;
}
