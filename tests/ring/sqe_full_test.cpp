// Ring::prepare() on a full SQ returns an empty Sqe, and the chained setters
// of the usual one-liner `ring.prepare(op).user_data(x).link()` then do
// nothing: before, they dereferenced null (guarded only by an assert).
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"

#include <gtest/gtest.h>

using namespace uringkit;

namespace {

TEST(SqeFull, SettersOnAnEmptySqeDoNothing) {
    Ring ring(2);
    ASSERT_TRUE(ring.prepare(op::Nop{}).user_data(1));
    ASSERT_TRUE(ring.prepare(op::Nop{}).user_data(2));
    Sqe full = ring.prepare(op::Nop{});
    EXPECT_FALSE(full);
    full.user_data(42).link().drain().async().personality(1);  // no crash
    EXPECT_EQ(full.get(), nullptr);
    ASSERT_EQ(ring.submit_and_wait(2), 2);
    std::vector<std::uint64_t> seen;
    ring.for_each_completion([&](const Completion& c) { seen.push_back(c.user_data); });
    EXPECT_EQ(seen, (std::vector<std::uint64_t>{1, 2}))
        << "the full SQ's setters touched a prepared SQE";
}

}  // namespace
