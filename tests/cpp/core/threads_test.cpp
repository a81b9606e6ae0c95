// The one rule for requested thread counts: 0 means every core, 1..kMaxThreads as given, and
// anything else is refused with the range (10,000 once grew past 16,000 threads).
#include "counterpoint/core/threads.h"

#include <gtest/gtest.h>

#include "counterpoint/core/errors.h"

using namespace counterpoint;

TEST(Threads, ZeroMeansEveryCoreAndCountsInRangeAreKept) {
  EXPECT_GE(resolve_threads(0, "threads"), 1);
  EXPECT_EQ(resolve_threads(1, "threads"), 1);
  EXPECT_EQ(resolve_threads(kMaxThreads, "threads"), kMaxThreads);
}

TEST(Threads, CountsOutsideTheRangeAreRefusedWithIt) {
  try {
    resolve_threads(10000, "--threads");
    FAIL() << "accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "--threads must be between 0 (all cores) and 256, got 10000");
  }
  EXPECT_THROW(resolve_threads(-1, "threads"), InvalidArgument);
}

// Under an address-space limit (ulimit -v) OpenBLAS's per-thread buffers of more threads than fit
// were retried forever: `--threads 64` under 8 GiB never exited. The limit bounds the count.
TEST(Threads, AnAddressSpaceLimitBoundsTheCount) {
  EXPECT_EQ(threads_within(std::uint64_t(8) << 30), 24);
  EXPECT_EQ(threads_within(std::uint64_t(1) << 30), 1);
  EXPECT_EQ(threads_within(std::uint64_t(1) << 40), kMaxThreads);
}
