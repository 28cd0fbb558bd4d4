// Bench's options, checked and turned into the benchmark's spec (bench_options.hpp).
#include "bench_options.hpp"

#include "command.hpp"

#include "cli/duration.hpp"
#include "cli/size.hpp"
#include "engines/engine.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>

namespace uringkit::cli {
namespace {

using namespace uringkit::engines;

constexpr unsigned kMaxDepth = 32768;  // IORING_MAX_ENTRIES: the most a ring's SQ can hold

using Options = BenchOptions;

// "2", "2s", "1.5", "500ms", "1m" -> seconds.
double parse_seconds(const std::string& opt, const std::string& text) {
    const auto v = cli::parse_seconds(text);
    if (!v)
        throw UsageError{fmt::format("{} {}: give seconds, like 2, 2s, 500ms or 1m", opt, text)};
    return *v;
}

}  // namespace

BenchSpec make_spec(const GivenOptions& given, const Options& o, TargetSpec& target) {
    BenchSpec spec;
    Workload& w = spec.workload;
    const auto rw = parse_rw(o.rw);
    if (!rw)
        throw UsageError{
            fmt::format("--rw {}: use randread, read, randwrite, write or randrw", o.rw)};
    w.rw = *rw;
    if (o.rwmixread > 100)
        throw UsageError{fmt::format("--rwmixread {}: give a percentage, 0 to 100", o.rwmixread)};
    w.rwmixread = o.rwmixread;
    const auto bs = cli::parse_size(o.bs);
    if (!bs || *bs == 0 || *bs > (64u << 20))
        throw UsageError{
            fmt::format("--bs {}: give a block size from 1 byte to 64m, like 4k", o.bs)};
    w.bs = static_cast<std::uint32_t>(*bs);
    std::uint64_t size = 0;
    if (!o.size.empty()) {
        const auto s = cli::parse_size(o.size);
        if (!s)
            throw UsageError{fmt::format(
                "--size {}: not a size; give a whole number of bytes, like 256m, 1.5g or 4096",
                o.size)};
        if (*s == 0)
            throw UsageError{
                fmt::format("--size {}: give a size above 0, like 256m or 1g", o.size)};
        size = *s;
    } else if (o.filename.empty()) {
        size = 256u << 20;
    }
    spec.depths.clear();
    for (const std::string& d : split_option("--iodepth", o.iodepth, "1,8,32")) {
        char* end = nullptr;
        const long v = std::strtol(d.c_str(), &end, 10);
        if (end == d.c_str() || *end || v < 1)
            throw UsageError{fmt::format(
                "--iodepth {}: depths are whole numbers from 1 to {}, like 1,8,32", d, kMaxDepth)};
        if (v > static_cast<long>(kMaxDepth))
            throw UsageError{
                fmt::format("--iodepth {}: above the ring's maximum of {} entries", d, kMaxDepth)};
        spec.depths.push_back(static_cast<unsigned>(v));
    }
    if (spec.depths.empty()) throw UsageError{"--iodepth: give at least one depth, like 1,32"};
    // A batch larger than every depth could never be submitted: refuse it
    // rather than run something other than what was asked.  Within a sweep
    // each depth uses min(batch, depth), and the header says so.
    if (given("--batch") && o.batch == 0)
        throw UsageError{
            "--batch 0: give 1 or more I/Os per submit (leave --batch out for a batch of the "
            "depth)"};
    const unsigned deepest = *std::max_element(spec.depths.begin(), spec.depths.end());
    if (o.batch > deepest)
        throw UsageError{fmt::format(
            "--batch {}: above the largest --iodepth ({}); a batch is at most the depth", o.batch,
            deepest)};
    if (o.numjobs < 1 || o.numjobs > 1024)
        throw UsageError{fmt::format("--numjobs {}: give 1 to 1024", o.numjobs)};
    spec.numjobs = o.numjobs;
    if (o.rounds < 1 || o.rounds > 1000)
        throw UsageError{fmt::format("--rounds {}: give 1 to 1000", o.rounds)};
    spec.rounds = o.rounds;
    const auto order = parse_order(o.order);
    if (!order) throw UsageError{fmt::format("--order {}: use rotate, shuffle or fixed", o.order)};
    spec.order = *order;
    // A shuffle without a seed gets a fresh one, printed so the run can be repeated.
    spec.order_seed = o.order_seed ? *o.order_seed : std::random_device{}();
    if (!(o.confidence >= 0.5 && o.confidence < 1))
        throw UsageError{
            fmt::format("--confidence {}: give a probability from 0.5 to below 1, "
                        "like 0.95",
                        o.confidence)};
    spec.confidence = o.confidence;
    if (o.threads < 1 || o.threads > 4096)
        throw UsageError{fmt::format("--threads {}: give 1 to 4096", o.threads)};
    w.threadpool_workers = o.threads;
    if (given("--ring-entries") && (o.ring_entries == 0 || o.ring_entries > kMaxDepth ||
                                    (o.ring_entries & (o.ring_entries - 1)) != 0))
        throw UsageError{fmt::format("--ring-entries {}: give a power of two from 1 to {}, like 8",
                                     o.ring_entries, kMaxDepth)};
    spec.ring_entries = o.ring_entries;
    if (given("--sq-thread-idle") && (o.sq_thread_idle == 0 || o.sq_thread_idle > 60000))
        throw UsageError{
            fmt::format("--sq-thread-idle {}: give 1 to 60000 milliseconds", o.sq_thread_idle)};
    spec.sq_thread_idle_ms = o.sq_thread_idle;
    spec.latency = !o.no_latency;
    spec.batch = o.batch;
    if (o.ios < 0 || (o.ios == 0 && given("--ios")))
        throw UsageError{fmt::format("--ios {}: give a count above 0", o.ios)};
    spec.ios = static_cast<std::uint64_t>(o.ios);
    if (!o.runtime.empty()) {
        spec.runtime_s = parse_seconds("--runtime", o.runtime);
        if (spec.runtime_s <= 0)
            throw UsageError{"--runtime 0: give a time above 0 (or use --ios)"};
    } else if (spec.ios == 0) {
        // With the ramp, 0.2 s per run: 11 rounds of 8 engines at 2 depths take ~35 s.
        spec.runtime_s = 0.15;
    }
    spec.ramp_s =
        !o.ramp.empty() ? parse_seconds("--ramp", o.ramp) : (spec.runtime_s > 0 ? 0.05 : 0.0);
    if (o.cache == "warm")
        spec.cache = Cache::warm;
    else if (o.cache == "cold")
        spec.cache = Cache::cold;
    else
        throw UsageError{fmt::format("--cache {}: use warm or cold", o.cache)};
    w.direct = o.direct;
    w.seed = o.seed;
    if (!given("--engines")) {
        for (std::string_view e : default_engines()) spec.engines.emplace_back(e);
    } else {
        for (const std::string& e : split_option("--engines", o.engines, "pread,uring")) {
            if (!find_engine(e)) {
                std::string known;
                for (const EngineInfo& i : all_engines())
                    known += (known.empty() ? "" : ", ") + std::string(i.name);
                throw UsageError{
                    fmt::format("--engines: unknown engine '{}' (known: {})", e, known)};
            }
            spec.engines.push_back(e);
        }
    }
    if (o.verify && !o.filename.empty())
        throw UsageError{
            "--verify checks the offset stamps of a temporary file; leave out --filename"};
    w.verify = o.verify;
    if (!o.offset.empty()) {
        const auto off = cli::parse_size(o.offset);
        if (!off || *off % w.bs != 0)
            throw UsageError{
                fmt::format("--offset {}: give a multiple of --bs ({})", o.offset, w.bs)};
        w.offset = *off;
    }
    target.filename = o.filename;
    // The file holds the range after the offset: a temporary one is made that long.
    target.size = size ? size + w.offset : 0;
    target.bs = w.bs;
    target.direct = w.direct;
    target.write = writes(w.rw);
    target.allow_write = o.allow_write;
    return spec;
}

}  // namespace uringkit::cli
