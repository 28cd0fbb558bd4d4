// bench's text table: one row per engine x depth, as wide as the terminal
// allows.  Each column has a rank; when the table would be wider than the
// terminal, the lowest-ranked go first (the ones that explain rather than
// answer "which is faster": ctx switches, max and mean latency, usr/sys
// split), and a last line names what was left out.
#include "engines/engine.hpp"
#include "engines/figures.hpp"
#include "engines/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace uringkit::engines {
namespace {

using detail::count;
using detail::sig3;

// Characters on a terminal: UTF-8 continuation bytes take no column ("µs").
std::size_t display_width(std::string_view s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad(std::string_view s, std::size_t width, bool left) {
    const std::size_t w = display_width(s);
    const std::string fill(w < width ? width - w : 0, ' ');
    return left ? std::string(s) + fill : fill + std::string(s);
}

enum class Id {
    engine,
    depth,
    batch,
    iops,
    interval,
    mib,
    mean,
    p50,
    p99,
    p99_9,
    max,
    usr,
    sys,
    cpu,
    ctx,
    syscalls,
    per_submit,
    kernel_threads,
    offload,
    saved
};

struct Column {
    Id id;
    std::string head;
    // The second header line, shared by neighbouring columns with the same
    // label: the longest of these that fits over the columns kept.
    std::vector<std::string_view> group;
    int section;  // one space between columns of a section, two between sections
    std::size_t width;
    bool left;
    int rank;  // the lowest-ranked column is dropped first to fit
    std::function<std::string(const Row&)> cell;
};

// The I/Os an engine keeps in flight at most, whatever the depth asked
// (EngineInfo::most_in_flight); 0 when the depth is what it gets.  auto
// counts as the engine it ran.
unsigned most_in_flight(const Row& r) {
    const EngineInfo* e = find_engine(engine_base(r.ran.empty() ? r.engine : r.ran));
    return e ? e->most_in_flight : 0;
}

// "1.03x same" for a row's IOPS against the saved run.
std::string saved_cell(const Row& r, const std::vector<Comparison>& against_saved) {
    for (const Comparison& c : against_saved)
        if (c.a == r.engine && c.iodepth == r.iodepth && c.metric == Metric::iops)
            return fmt::format("{:.2f}x {}", c.ratio,
                               c.verdict == Judgement::too_few_samples ? std::string_view("too few")
                                                                       : judgement_name(c.verdict));
    return "not in saved run";
}

using Cell = std::function<std::string(const Row&)>;

// A right-aligned column (figures), as most are.
Column figure(Id id, std::string head, int section, std::size_t width, int rank, Cell cell,
              std::vector<std::string_view> group = {}) {
    return {id, std::move(head), std::move(group), section, width, false, rank, std::move(cell)};
}

std::string latency_us(double ns) {
    return sig3(ns / 1e3);
}

std::vector<Column> all_columns(const Results& res, const std::vector<Comparison>& against_saved) {
    bool ranges = false;
    for (const Row& r : res.rows) ranges |= r.runs > 1;
    const std::vector<std::string_view> lat = {"latency, µs (submit to reap)", "latency, µs",
                                               "lat. µs", "µs"};
    std::vector<Column> c;
    c.push_back(figure(Id::engine, "engine", 0, 13, 100,
                       [](const Row& r) { return r.engine + (r.interrupted ? "*" : ""); }));
    c.back().left = true;
    c.push_back(figure(Id::depth, "depth", 0, 5, 100,
                       [](const Row& r) { return std::to_string(r.iodepth); }));
    c.push_back(figure(Id::batch, "batch", 0, 5, 100,
                       [](const Row& r) { return std::to_string(r.batch); }));
    c.push_back(figure(Id::iops, "IOPS", 0, 9, 100, [](const Row& r) { return count(r.iops); }));
    // The interval of each median: at the run's confidence where the rounds
    // allow it, else (marked ~) the min-max, which covers it with less.
    if (ranges)
        c.push_back(figure(Id::interval, fmt::format("({:.4g}% interval)", res.confidence * 100), 0,
                           16, 80, [](const Row& r) {
                               if (r.runs < 2) return std::string();
                               return (r.interval_covered ? "" : "~") + count(r.iops_low) + "-" +
                                      count(r.iops_high);
                           }));
    c.push_back(figure(Id::mib, "MiB/s", 0, 8, 50, [](const Row& r) {
        return fmt::format("{:.1f}", r.bw_bytes / (1024.0 * 1024.0));
    }));
    // --no-latency: nothing was recorded, so no latency columns.
    if (res.latency) {
        c.push_back(figure(
            Id::mean, "mean", 1, 7, 20, [](const Row& r) { return latency_us(r.lat_ns.mean); },
            lat));
        c.push_back(figure(
            Id::p50, "p50", 1, 7, 60, [](const Row& r) { return latency_us(r.lat_ns.p50); }, lat));
        c.push_back(figure(
            Id::p99, "p99", 1, 7, 70, [](const Row& r) { return latency_us(r.lat_ns.p99); }, lat));
        c.push_back(figure(
            Id::p99_9, "p99.9", 1, 7, 30, [](const Row& r) { return latency_us(r.lat_ns.p99_9); },
            lat));
        c.push_back(figure(
            Id::max, "max", 1, 7, 15, [](const Row& r) { return latency_us(r.lat_ns.max); }, lat));
    }
    c.push_back(figure(Id::usr, "usr%", 2, 5, 34,
                       [](const Row& r) { return fmt::format("{:.1f}", r.cpu_usr); }));
    c.push_back(figure(Id::sys, "sys%", 2, 5, 35,
                       [](const Row& r) { return fmt::format("{:.1f}", r.cpu_sys); }));
    c.push_back(figure(Id::cpu, "CPU/IO", 2, 7, 65,
                       [](const Row& r) { return sig3(r.cpu_us_per_io); }, {"µs"}));
    c.push_back(figure(Id::ctx, "ctx/kIO", 2, 9, 10,
                       [](const Row& r) {
                           return fmt::format("{:.0f}/{:.0f}", r.ctx_vol_per_kio,
                                              r.ctx_invol_per_kio);
                       },
                       {"vol/inv"}));
    c.push_back(figure(Id::syscalls, "sys/IO", 2, 7, 45,
                       [](const Row& r) { return sig3(r.syscalls_per_io); }));
    c.push_back(figure(Id::per_submit, "IO/sub", 2, 6, 40,
                       [](const Row& r) { return sig3(r.ios_per_submit); }));
    // Where the time went besides the engine's thread (Attribution): the
    // share of its CPU spent in io_uring's kernel threads (io-wq workers,
    // the SQPOLL thread), and the hand-offs to io-wq per I/O where counted.
    // They explain rather than answer, so they are the first to go.
    c.push_back(figure(Id::kernel_threads, "kthr%", 2, 5, 8, [](const Row& r) {
        const Attribution& a = r.attribution;
        const double share =
            r.cpu_us_per_io > 0
                ? 100 * (a.offload_cpu_us_per_io + a.sqpoll_cpu_us_per_io) / r.cpu_us_per_io
                : 0;
        return fmt::format("{:.0f}", std::min(share, 100.0));
    }));
    c.push_back(figure(Id::offload, "offl/IO", 2, 7, 5, [](const Row& r) {
        return r.attribution.offload_per_io < 0 ? std::string("-")
                                                : sig3(r.attribution.offload_per_io);
    }));
    if (!against_saved.empty()) {
        c.push_back(figure(Id::saved, "IOPS vs saved", 3, 16, 90,
                           [against_saved](const Row& r) { return saved_cell(r, against_saved); }));
        c.back().left = true;
    }
    return c;
}

std::size_t separator(const Column* before, const Column& c) {
    if (!before) return 0;
    return before->section == c.section ? 1 : 2;
}

std::size_t table_width(const std::vector<Column>& cols) {
    std::size_t w = 0;
    for (std::size_t i = 0; i < cols.size(); ++i)
        w += separator(i ? &cols[i - 1] : nullptr, cols[i]) + cols[i].width;
    return w;
}

// One line of the table: each column's text, or for a row whose engine keeps
// fewer I/Os in flight than the depth asked, "1 at a time" across its
// depth and batch cells rather than a depth it never had.
std::string line(const std::vector<Column>& cols,
                 const std::function<std::string(const Column&)>& text, unsigned at_a_time = 0) {
    std::string out;
    for (std::size_t i = 0; i < cols.size(); ++i) {
        const Column& c = cols[i];
        out += std::string(separator(i ? &cols[i - 1] : nullptr, c), ' ');
        if (at_a_time && c.id == Id::depth && i + 1 < cols.size() && cols[i + 1].id == Id::batch) {
            out +=
                pad(fmt::format("{} at a time", at_a_time), c.width + 1 + cols[i + 1].width, false);
            ++i;
            continue;
        }
        out += pad(text(c), c.width, c.left);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
}

// The second header line: each group's label over the columns that share it.
std::string group_line(const std::vector<Column>& cols) {
    std::string out;
    for (std::size_t i = 0; i < cols.size();) {
        std::size_t j = i + 1, span = cols[i].width;
        while (j < cols.size() && !cols[i].group.empty() && cols[j].group == cols[i].group)
            span += separator(&cols[j - 1], cols[j]) + cols[j].width, ++j;
        out += std::string(separator(i ? &cols[i - 1] : nullptr, cols[i]), ' ');
        std::string_view label;
        for (std::string_view g : cols[i].group)
            if (display_width(g) <= span) {
                label = g;
                break;
            }
        out += pad(label, span, false);
        i = j;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
}

}  // namespace

std::string format_table(const Results& res, const std::vector<Comparison>& against_saved,
                         std::size_t width) {
    std::vector<Column> cols = all_columns(res, against_saved);
    std::vector<std::string> dropped;
    while (width > 0 && table_width(cols) > width) {
        const auto weakest =
            std::min_element(cols.begin(), cols.end(),
                             [](const Column& a, const Column& b) { return a.rank < b.rank; });
        if (weakest->rank >= 100) break;  // engine, depth, batch and IOPS stay
        dropped.push_back(weakest->id == Id::interval ? "IOPS interval" : weakest->head);
        cols.erase(weakest);
    }
    std::string out = line(cols, [](const Column& c) { return c.head; });
    out += group_line(cols);
    const std::size_t id_width = cols[0].width + 1 + cols[1].width + 1 + cols[2].width;
    for (const Row& r : res.rows) {
        const unsigned limit = most_in_flight(r);
        const unsigned at_a_time = limit && r.iodepth > limit ? limit : 0;
        if (r.status != Row::ok) {
            std::string head = line(
                {cols.begin(), cols.begin() + 3}, [&](const Column& c) { return c.cell(r); },
                at_a_time);
            head.pop_back();
            out += pad(head, id_width, true) +
                   fmt::format("  {}: {}\n", status_name(r.status), r.reason);
            continue;
        }
        out += line(
            cols, [&](const Column& c) { return c.cell(r); }, at_a_time);
    }
    if (!dropped.empty()) {
        // Named in words that wrap within the width too.
        std::string note =
            fmt::format("(left out to fit {} columns, --wide shows every column:", width);
        for (std::size_t i = 0; i < dropped.size(); ++i)
            note += fmt::format(" {}{}", dropped[i], i + 1 < dropped.size() ? "," : ")");
        std::string wrapped;
        for (std::size_t at = 0; at < note.size();) {
            std::size_t end = note.find(' ', at + 1);
            if (end == std::string::npos) end = note.size();
            const std::string word = note.substr(at, end - at);
            if (!wrapped.empty() && display_width(wrapped) + display_width(word) > width) {
                out += wrapped + "\n";
                wrapped = word.substr(1);
            } else {
                wrapped += word;
            }
            at = end;
        }
        out += wrapped + "\n";
    }
    return out;
}

}  // namespace uringkit::engines
