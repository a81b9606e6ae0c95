// counterpoint/core/version.h: the library version, also exposed as counterpoint.__version__.
#pragma once

#define COUNTERPOINT_VERSION_MAJOR 0
#define COUNTERPOINT_VERSION_MINOR 1
#define COUNTERPOINT_VERSION_PATCH 0
#define COUNTERPOINT_VERSION_STRING "0.1.0"

namespace counterpoint {
inline const char* version() { return COUNTERPOINT_VERSION_STRING; }
}  // namespace counterpoint
