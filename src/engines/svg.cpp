// The chart: two panels side by side, IOPS against depth per engine and CPU
// microseconds per I/O against depth, written as plain SVG (no library, no
// script) so it opens in any browser, renders with rsvg-convert and pastes
// into a report.  It draws what the verdict rests on, readable on paper:
// each median with its interval as an error bar, the A/A noise band where
// the run had one, and each point's verdict against the engine it is
// compared with as the marker's shape, all explained in a legend below the
// panels.
#include "cli/size.hpp"
#include "engines/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace uringkit::engines {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

// A "nice" step (1, 2, 5 x 10^n) giving about `n` ticks up to `max`.
double nice_step(double max, int n) {
    const double raw = max / n;
    const double mag = std::pow(10, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (raw <= m * mag) return m * mag;
    return 10 * mag;
}

std::string tick_label(double v) {
    if (v >= 1e6) return fmt::format("{:g}M", v / 1e6);
    if (v >= 1e3) return fmt::format("{:g}k", v / 1e3);
    return fmt::format("{:g}", v);
}

std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '<')
            o += "&lt;";
        else if (c == '>')
            o += "&gt;";
        else if (c == '&')
            o += "&amp;";
        else if (c == '"')
            o += "&quot;";
        else
            o += c;
    }
    return o;
}

struct Panel {
    double x, y, w, h;  // plot area
    Metric metric;
};

// What a point's marker says: the verdict of its engine against the engine
// it is compared with at that depth (verdict.hpp's pairings), the reference
// others are compared with, or nothing to say (it ran alone).
enum class Mark { faster, slower, same, too_few, reference, alone };

std::string_view mark_name(Mark m) {
    switch (m) {
        case Mark::faster:
            return "faster";
        case Mark::slower:
            return "slower";
        case Mark::same:
            return "same";
        case Mark::too_few:
            return "too_few_samples";
        case Mark::reference:
            return "reference";
        case Mark::alone:
            break;
    }
    return "not_compared";
}

// The first comparison of `engine` at `depth` is the one the verdict leads
// with: against pread (or the first engine listed), its first listing for an
// A/A twin, the engine auto did not run.
const Comparison* comparison_of(const std::vector<Comparison>& cs, const std::string& engine,
                                unsigned depth, Metric metric) {
    for (const Comparison& c : cs)
        if (c.a == engine && c.iodepth == depth && c.metric == metric) return &c;
    return nullptr;
}

Mark mark_of(const std::vector<Comparison>& cs, const std::string& engine, unsigned depth,
             Metric metric) {
    if (const Comparison* c = comparison_of(cs, engine, depth, metric)) {
        switch (c->verdict) {
            case Judgement::faster:
                return Mark::faster;
            case Judgement::slower:
                return Mark::slower;
            case Judgement::same:
                return Mark::same;
            case Judgement::too_few_samples:
                return Mark::too_few;
        }
    }
    for (const Comparison& c : cs)
        if (c.b == engine && c.iodepth == depth) return Mark::reference;
    return Mark::alone;
}

// The marker's shape, centred on (x, y): up for faster (or less CPU), down
// for slower, a filled dot for the same, a hollow one for too few samples, a
// square for the reference, a small dot for a point compared with nothing.
std::string marker(Mark m, double x, double y, const char* color) {
    switch (m) {
        case Mark::faster:
            return fmt::format(
                "<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" fill=\"{}\"/>", x,
                y - 6, x - 5.5, y + 4, x + 5.5, y + 4, color);
        case Mark::slower:
            return fmt::format(
                "<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" fill=\"{}\"/>", x,
                y + 6, x - 5.5, y - 4, x + 5.5, y - 4, color);
        case Mark::same:
            return fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"{}\"/>", x, y,
                               color);
        case Mark::too_few:
            return fmt::format(
                "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"white\" stroke=\"{}\" "
                "stroke-width=\"1.5\"/>",
                x, y, color);
        case Mark::reference:
            return fmt::format(
                "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"9\" height=\"9\" fill=\"{}\"/>", x - 4.5,
                y - 4.5, color);
        case Mark::alone:
            break;
    }
    return fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>", x, y, color);
}

double value_of(const Row& r, Metric m) {
    return m == Metric::iops ? r.iops : r.cpu_us_per_io;
}
double low_of(const Row& r, Metric m) {
    return m == Metric::iops ? r.iops_low : r.cpu_us_per_io_low;
}
double high_of(const Row& r, Metric m) {
    return m == Metric::iops ? r.iops_high : r.cpu_us_per_io_high;
}

const Row* ok_row(const Results& res, const std::string& engine, unsigned depth) {
    for (const Row& r : res.rows)
        if (r.engine == engine && r.iodepth == depth && r.status == Row::ok) return &r;
    return nullptr;
}

// An A/A band: where the twin of `engine` could land by noise alone, its
// median times the interval of the twin's paired ratios.
struct NoiseBand {
    std::string engine, twin;
    unsigned depth;
    double low, high;
};

std::vector<NoiseBand> noise_bands(const Results& res, const std::vector<Comparison>& cs,
                                   Metric metric) {
    std::vector<NoiseBand> out;
    for (const Comparison& c : cs) {
        if (c.metric != metric || c.a.find('#') == std::string::npos || c.b != engine_base(c.a) ||
            c.pairs < 2 || c.ratio_low <= 0)
            continue;
        if (const Row* base = ok_row(res, c.b, c.iodepth))
            out.push_back({c.b, c.a, c.iodepth, value_of(*base, metric) * c.ratio_low,
                           value_of(*base, metric) * c.ratio_high});
    }
    return out;
}

// "uring, liburing against pread; uring#2 against uring (A/A)": who each
// point's mark compares it with (the first comparison of its engine at its
// depth), with the depths where that holds only at some ("auto at depth 1").
std::string compared_with(const std::vector<Comparison>& cs) {
    struct Pair {
        std::string a, b;
        std::vector<unsigned> depths;
    };
    std::vector<Pair> pairs;
    std::vector<std::pair<std::string, unsigned>> seen;  // engine, depth
    for (const Comparison& c : cs) {
        if (std::find(seen.begin(), seen.end(), std::pair{c.a, c.iodepth}) != seen.end()) continue;
        seen.emplace_back(c.a, c.iodepth);
        auto it = std::find_if(pairs.begin(), pairs.end(),
                               [&](const Pair& p) { return p.a == c.a && p.b == c.b; });
        if (it == pairs.end()) it = pairs.insert(pairs.end(), {c.a, c.b, {}});
        it->depths.push_back(c.iodepth);
    }
    std::vector<std::pair<std::string, std::string>> by_reference;  // b, "a, a at depth 1"
    for (const Pair& p : pairs) {
        const auto everywhere =
            std::count_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == p.a; });
        std::string name = p.a;
        if (static_cast<std::size_t>(everywhere) != p.depths.size()) {
            name += " at depth ";
            for (std::size_t i = 0; i < p.depths.size(); ++i)
                name += (i ? "," : "") + std::to_string(p.depths[i]);
        }
        auto it = std::find_if(by_reference.begin(), by_reference.end(),
                               [&](const auto& r) { return r.first == p.b; });
        if (it == by_reference.end())
            by_reference.emplace_back(p.b, name);
        else
            it->second += ", " + name;
    }
    std::string out;
    for (const auto& [reference, names] : by_reference)
        out += fmt::format("{}{} against {}{}", out.empty() ? "" : "; ", names, reference,
                           engine_base(names) == reference && names.find(',') == std::string::npos
                               ? " (A/A)"
                               : "");
    return out;
}

}  // namespace

std::string to_svg(const Report& rep) {
    const Results& res = rep.results;
    const std::vector<Comparison> cs = compare_engines(res);
    std::vector<unsigned> depths;
    std::vector<std::string> engines;
    for (const Row& r : res.rows) {
        if (std::find(depths.begin(), depths.end(), r.iodepth) == depths.end())
            depths.push_back(r.iodepth);
        if (r.status == Row::ok &&
            std::find(engines.begin(), engines.end(), r.engine) == engines.end())
            engines.push_back(r.engine);
    }
    std::sort(depths.begin(), depths.end());
    const double W = 1000;
    const Panel panels[2] = {{90, 70, 360, 330, Metric::iops},
                             {580, 70, 360, 330, Metric::cpu_us_per_io}};
    // The legend sits below the panels, outside both data areas: the engines
    // in rows of up to six, then one line per key.
    const std::size_t per_row = 6;
    const std::size_t engine_rows = (engines.size() + per_row - 1) / per_row;
    const double legend_y = panels[0].y + panels[0].h + 68;
    const double H = legend_y + 20 * static_cast<double>(engine_rows) + 5 * 18 + 16;
    std::string s = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
        "{1}\" "
        "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        W, H);
    const Workload& w = rep.spec.workload;
    const std::string cache =
        w.direct ? "O_DIRECT" : (rep.spec.cache == Cache::warm ? "warm cache" : "cold cache");
    s += fmt::format(
        "<text class=\"title\" x=\"{}\" y=\"24\" font-size=\"16\" font-weight=\"bold\" "
        "text-anchor=\"middle\">uringkit "
        "bench: {} {} {}, {} file, {} job{}</text>\n",
        W / 2, escape(cli::format_bytes(w.bs)), rw_name(w.rw), cache,
        escape(cli::format_bytes(rep.size)), rep.spec.numjobs, rep.spec.numjobs > 1 ? "s" : "");
    s += fmt::format(
        "<text x=\"{}\" y=\"44\" fill=\"#555\" text-anchor=\"middle\">Linux {}, {} cores, {} on {}"
        "</text>\n",
        W / 2, escape(rep.host.kernel), rep.host.cores, escape(rep.host.filesystem),
        escape(rep.host.device));

    // x: depth on a log2 scale (1, 2, 4 ... evenly spaced), so 1 and 32 both
    // read; the engines at one depth sit a few pixels apart, so their error
    // bars do not hide each other.
    const double lo = std::log2(std::max(1u, depths.empty() ? 1u : depths.front()));
    const double hi = std::log2(std::max(1u, depths.empty() ? 1u : depths.back()));
    const double spread = 7;
    auto xpos = [&](const Panel& p, unsigned d) {
        if (hi == lo) return p.x + p.w / 2;
        return p.x + 40 + (std::log2(d) - lo) / (hi - lo) * (p.w - 80);
    };
    auto offset = [&](std::size_t e) {
        return (static_cast<double>(e) - (static_cast<double>(engines.size()) - 1) / 2) * spread;
    };
    for (const Panel& p : panels) {
        const Metric m = p.metric;
        const std::vector<NoiseBand> bands = noise_bands(res, cs, m);
        double vmax = 0;
        for (const Row& r : res.rows)
            if (r.status == Row::ok) vmax = std::max({vmax, value_of(r, m), high_of(r, m)});
        for (const NoiseBand& b : bands) vmax = std::max(vmax, b.high);
        if (vmax <= 0) vmax = 1;
        const double step = nice_step(vmax * 1.05, 5);
        const double top = std::ceil(vmax * 1.05 / step) * step;
        auto ypos = [&](double v) { return p.y + p.h - std::clamp(v / top, 0.0, 1.0) * p.h; };
        s += fmt::format(
            "<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\" "
            "text-anchor=\"middle\">{}"
            "</text>\n",
            p.x + p.w / 2, p.y - 10,
            m == Metric::iops ? "IOPS (higher is better)" : "CPU per I/O (lower is better)");
        for (double v = 0; v <= top + step / 2; v += step) {
            const double y = ypos(v);
            s += fmt::format(
                "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e5e5e5\"/>\n", p.x,
                y, p.x + p.w, y);
            s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", p.x - 6,
                             y + 4, tick_label(v));
        }
        s += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
            p.x, p.y, p.w, p.h);
        for (unsigned d : depths) {
            const double x = xpos(p, d);
            s += fmt::format(
                "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#333\"/>\n", x,
                p.y + p.h, p.y + p.h + 5);
            s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x,
                             p.y + p.h + 19, d);
        }
        s += fmt::format(
            "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">I/O depth (I/Os "
            "in flight per job)</text>\n",
            p.x + p.w / 2, p.y + p.h + 38);
        s += fmt::format(
            "<text class=\"axis-label\" transform=\"translate({},{}) rotate(-90)\" "
            "text-anchor=\"middle\">{}</text>\n",
            p.x - 62, p.y + p.h / 2,
            m == Metric::iops ? "I/Os per second (IOPS)" : "µs of CPU per I/O");
        // The A/A bands under the points they explain.
        for (const NoiseBand& b : bands) {
            const auto e = std::find(engines.begin(), engines.end(), b.engine) - engines.begin();
            const double x = xpos(p, b.depth);
            const double half = spread * static_cast<double>(engines.size()) / 2 + 8;
            s += fmt::format(
                "<rect class=\"aa-band\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                "height=\"{:.1f}\" fill=\"{}\" fill-opacity=\"0.15\" stroke=\"{}\" "
                "stroke-opacity=\"0.4\" stroke-dasharray=\"2,2\"><title>A/A noise at depth {}: "
                "{} against {}</title></rect>\n",
                x - half, ypos(b.high), 2 * half, std::max(ypos(b.low) - ypos(b.high), 1.0),
                kColors[static_cast<std::size_t>(e) % std::size(kColors)],
                kColors[static_cast<std::size_t>(e) % std::size(kColors)], b.depth, escape(b.twin),
                escape(b.engine));
        }
        for (std::size_t e = 0; e < engines.size(); ++e) {
            const char* color = kColors[e % std::size(kColors)];
            std::string points;
            std::string marks;
            for (unsigned d : depths) {
                const Row* r = ok_row(res, engines[e], d);
                if (!r) continue;
                const double x = xpos(p, d) + offset(e), y = ypos(value_of(*r, m));
                const double ylow = ypos(low_of(*r, m)), yhigh = ypos(high_of(*r, m));
                const Mark mark = mark_of(cs, engines[e], d, m);
                points += fmt::format("{:.1f},{:.1f} ", x, y);
                // Dashed: too few rounds for the confidence, the bar is the min-max.
                const char* dash = r->interval_covered ? "" : " stroke-dasharray=\"3,2\"";
                marks += fmt::format(
                    "<g class=\"point\" data-engine=\"{}\" data-depth=\"{}\" "
                    "data-verdict=\"{}\"><title>{} depth {}: {} ({}-{})</title>"
                    "<path class=\"error-bar\" d=\"M{:.1f},{:.1f}V{:.1f}M{:.1f},{:.1f}H{:.1f}"
                    "M{:.1f},{:.1f}H{:.1f}\" stroke=\"{}\" stroke-width=\"1.2\" fill=\"none\"{}/>"
                    "{}</g>\n",
                    escape(engines[e]), d, mark_name(mark), escape(engines[e]), d,
                    tick_label(std::round(value_of(*r, m) * 100) / 100),
                    tick_label(std::round(low_of(*r, m) * 100) / 100),
                    tick_label(std::round(high_of(*r, m) * 100) / 100), x, ylow, yhigh, x - 3, ylow,
                    x + 3, x - 3, yhigh, x + 3, color, dash, marker(mark, x, y, color));
            }
            if (!points.empty())
                s += fmt::format(
                    "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
                    "stroke-opacity=\"0.7\"/>\n",
                    points, color);
            s += marks;
        }
    }

    // Legend: the engines, then what the marks, bars and bands mean.
    for (std::size_t e = 0; e < engines.size(); ++e) {
        const double lx = 40 + 150 * static_cast<double>(e % per_row);
        const double ly = legend_y + 20 * static_cast<double>(e / per_row);
        const char* color = kColors[e % std::size(kColors)];
        s += fmt::format(
            "<g class=\"legend\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
            "stroke-width=\"3\"/><text x=\"{4}\" y=\"{5}\">{6}</text></g>\n",
            lx, ly, lx + 24, color, lx + 30, ly + 4, escape(engines[e]));
    }
    double ky = legend_y + 20 * static_cast<double>(engine_rows) + 4;
    const std::pair<Mark, const char*> keys[] = {
        {Mark::faster, "faster (IOPS) or less CPU"}, {Mark::slower, "slower or more CPU"},
        {Mark::same, "the same within the noise"},   {Mark::too_few, "too few samples"},
        {Mark::reference, "the reference"},
    };
    s += fmt::format("<text x=\"40\" y=\"{}\">verdict:</text>\n", ky + 4);
    // Each key as wide as its words (about 7 px a character at 12 px).
    double kx = 110;
    for (const auto& [mark, words] : keys) {
        s += fmt::format("<g class=\"legend verdict-key\" data-verdict=\"{}\">{}", mark_name(mark),
                         marker(mark, kx, ky, "#333"));
        s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text></g>\n", kx + 10, ky + 4, words);
        kx += 34 + 7 * static_cast<double>(std::string_view(words).size());
    }
    ky += 18;
    const std::string against = compared_with(cs);
    s += fmt::format(
        "<text class=\"legend\" x=\"40\" y=\"{}\">each point is judged against: {}</text>\n",
        ky + 4, against.empty() ? std::string("nothing (one engine ran)") : escape(against));
    ky += 18;
    s += fmt::format(
        "<g class=\"legend\"><path d=\"M46,{0:.1f}V{1:.1f}M43,{0:.1f}H49M43,{1:.1f}H49\" "
        "stroke=\"#333\" fill=\"none\"/><text x=\"60\" y=\"{2:.1f}\">error bar: the median's "
        "{3:.4g}% interval over the rounds (dashed: too few rounds for that, the min-max)"
        "</text></g>\n",
        ky - 2, ky + 8, ky + 7, res.confidence * 100);
    ky += 18;
    bool any_band = false;
    for (const Panel& p : panels) any_band |= !noise_bands(res, cs, p.metric).empty();
    if (any_band)
        s += fmt::format(
            "<g class=\"legend\"><rect x=\"40\" y=\"{:.1f}\" width=\"14\" height=\"10\" "
            "fill=\"#333\" fill-opacity=\"0.15\" stroke=\"#333\" stroke-opacity=\"0.4\" "
            "stroke-dasharray=\"2,2\"/><text x=\"60\" y=\"{:.1f}\">A/A noise band: how far one "
            "engine listed twice landed from itself (its paired ratios' interval times the first's "
            "median)</text></g>\n",
            ky - 1, ky + 8);
    else
        s += fmt::format(
            "<text class=\"legend\" x=\"40\" y=\"{}\">no A/A noise band: list an engine twice "
            "(--engines uring,uring) to draw one</text>\n",
            ky + 8);
    ky += 18;
    s += fmt::format(
        "<text x=\"40\" y=\"{}\" fill=\"#555\">CPU: user + system time of the whole process "
        "(kernel threads included) divided by I/Os; medians of {} run{} each</text>\n",
        ky + 4, rep.spec.rounds, rep.spec.rounds > 1 ? "s" : "");
    s += "</svg>\n";
    return s;
}

}  // namespace uringkit::engines
