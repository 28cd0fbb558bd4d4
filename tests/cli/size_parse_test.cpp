// cli::parse_size: the sizes people type, fio's decimal fractions included,
// exact to the byte; anything that is not a whole number of bytes is refused.
// Also the durations and lists of serve and bench (cli::parse_duration,
// parse_seconds, split_list).
#include "cli/duration.hpp"
#include "cli/size.hpp"

#include <gtest/gtest.h>

namespace {

using uringkit::cli::parse_size;

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

// The duration and list parsers of serve and bench (util/duration.hpp).
namespace {

using namespace std::chrono_literals;
using uringkit::cli::parse_duration;
using uringkit::cli::parse_seconds;
using uringkit::cli::split_list;

TEST(ParseDuration, WholeNumbersWithUnits) {
    EXPECT_EQ(parse_duration("30"), 30s);
    EXPECT_EQ(parse_duration("30s"), 30s);
    EXPECT_EQ(parse_duration("500ms"), 500ms);
    EXPECT_EQ(parse_duration("2m"), 2min);
    EXPECT_EQ(parse_duration("0"), 0ms);
    EXPECT_EQ(parse_duration("1000000000m"), std::chrono::minutes(1'000'000'000));
    // Leading zeros (the first input the fuzzer kept: 38 of them) count for nothing.
    EXPECT_EQ(parse_duration(std::string(38, '0')), 0ms);
    EXPECT_EQ(parse_duration("000000000000000000000030s"), 30s);
    for (const char* bad :
         {"", "s", "-1", "+1", "1.5s", "1h", "1 s", "1S", "1000000001", "99999999999999999999"})
        EXPECT_FALSE(parse_duration(bad)) << bad;
}

TEST(ParseSeconds, DecimalsWithUnitsUpToADay) {
    EXPECT_EQ(parse_seconds("2"), 2.0);
    EXPECT_EQ(parse_seconds("1.5s"), 1.5);
    EXPECT_EQ(parse_seconds("500ms"), 0.5);
    EXPECT_EQ(parse_seconds("1m"), 60.0);
    EXPECT_EQ(parse_seconds(".25"), 0.25);
    EXPECT_EQ(parse_seconds("86400"), 86400.0);
    for (const char* bad :
         {"", "-1", "+1", " 2", "2 s", "1h", "nan", "inf", "86401", "1441m", "1e3", "x"})
        EXPECT_FALSE(parse_seconds(bad)) << bad;
}

TEST(SplitList, ItemsBetweenCommasNoneEmpty) {
    EXPECT_EQ(split_list("1,8,32"), (std::vector<std::string>{"1", "8", "32"}));
    EXPECT_EQ(split_list("uring"), (std::vector<std::string>{"uring"}));
    for (const char* bad : {"", ",", "1,", ",1", "1,,2"}) EXPECT_FALSE(split_list(bad)) << bad;
}

}  // namespace
