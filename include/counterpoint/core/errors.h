// counterpoint/core: the vocabulary every layer shares.
// errors.h owns the exception hierarchy. Every failure the library reports is one of
// these types with a message naming the argument, file or limit involved, so the
// Python module can map each to the matching Python exception.
#pragma once

#include <stdexcept>
#include <string>

namespace counterpoint {

// Base class of every exception counterpoint throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A caller passed a value outside the documented domain (wrong width, k <= 0,
// NaN in a vector, invalid UTF-8 ...). Python: ValueError.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A path that must exist does not. Python: FileNotFoundError.
class FileNotFound : public Error {
 public:
  using Error::Error;
};

// A file exists but its content is damaged, truncated, of another version or
// does not match its manifest/checksum. Python: ValueError subclass CorruptFileError.
class CorruptFile : public Error {
 public:
  using Error::Error;
};

// An operating-system or I/O failure (disk full, permission denied). Python: OSError.
class IoError : public Error {
 public:
  using Error::Error;
};

// A long operation was stopped because its cancellation flag was raised
// (Ctrl-C in Python). Python: KeyboardInterrupt.
class Cancelled : public Error {
 public:
  using Error::Error;
};

}  // namespace counterpoint
