// util::parse_size: the sizes people type, fio's decimal fractions included,
// exact to the byte; anything that is not a whole number of bytes is refused.
#include "uringkit/util/size.hpp"

#include <gtest/gtest.h>

namespace {

using uringkit::util::parse_size;

TEST(ParseSize, WholeNumbersAndSuffixes) {
    EXPECT_EQ(parse_size("4096"), 4096u);
    EXPECT_EQ(parse_size("4k"), 4096u);
    EXPECT_EQ(parse_size("4KiB"), 4096u);
    EXPECT_EQ(parse_size("256m"), 256ull << 20);
    EXPECT_EQ(parse_size("1g"), 1ull << 30);
    EXPECT_EQ(parse_size("2t"), 2ull << 40);
    EXPECT_EQ(parse_size("0"), 0u);
}

TEST(ParseSize, DecimalFractionsAreExact) {
    EXPECT_EQ(parse_size("1.5m"), 1572864u);
    EXPECT_EQ(parse_size("1.5M"), 1572864u);
    EXPECT_EQ(parse_size("0.5k"), 512u);
    EXPECT_EQ(parse_size("2.25g"), (2ull << 30) + (1ull << 28));
    EXPECT_EQ(parse_size("1.0"), 1u);
    EXPECT_EQ(parse_size("0.000001t"), std::nullopt) << "1.0995 bytes";
    EXPECT_EQ(parse_size("0.00000005t"), std::nullopt)
        << "eight fraction digits: more than any size needs";
    EXPECT_EQ(parse_size("0.1k"), std::nullopt) << "102.4 bytes";
    EXPECT_EQ(parse_size("1.5"), std::nullopt) << "half a byte";
}

TEST(ParseSize, Malformed) {
    for (const char* bad :
         {"", "k", "1.", ".5k", "1..5m", "1.5.m", "-1", "1x", "1kb2", "1,5m", "0.12345678k"})
        EXPECT_EQ(parse_size(bad), std::nullopt) << bad;
}

TEST(ParseSize, Overflow) {
    EXPECT_EQ(parse_size("18446744073709551615"), 18446744073709551615ull);
    EXPECT_EQ(parse_size("18446744073709551616"), std::nullopt);
    EXPECT_EQ(parse_size("16777216t"), std::nullopt);
}

}  // namespace
