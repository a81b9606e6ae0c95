// counterpoint/core/json_integer.h: reading integers from JSON files without silent truncation.
// nlohmann::json converts 1.5 to 1 and out-of-range floats with undefined behaviour, so every
// integer field of a file the library reads passes through json_holds<T> first.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace counterpoint {

// True when `value` can be read as T exactly: for integral T, a JSON integer within T's range;
// for other T, whatever nlohmann accepts.
template <typename T>
bool json_holds(const nlohmann::json& value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!value.is_number_integer()) return false;
    if (value.is_number_unsigned()) {
      return value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    }
    const auto v = value.get<std::int64_t>();
    return v >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
           (v < 0 || static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
  } else {
    return true;
  }
}

}  // namespace counterpoint
