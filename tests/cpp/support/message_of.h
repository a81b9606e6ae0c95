// tests/cpp/support/message_of.h: what a refusal says. Exact-message tests compare the text a user
// reads, so message_of runs a call and returns the message of the counterpoint error it throws
// (InvalidArgument unless another is named), or kNothingThrown when the call goes through.
#pragma once

#include <functional>
#include <string>

#include "counterpoint/core/errors.h"

namespace counterpoint::test_support {

inline const std::string kNothingThrown = "(nothing thrown)";

template <typename Refusal = InvalidArgument>
std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Refusal& e) {
    return e.what();
  }
  return kNothingThrown;
}

}  // namespace counterpoint::test_support
