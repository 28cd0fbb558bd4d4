// The chart: two panels side by side, IOPS against depth per engine and CPU
// microseconds per I/O against depth, written as plain SVG (no library) so it
// opens in any browser and pastes into a report.
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
        else
            o += c;
    }
    return o;
}

struct Panel {
    double x, y, w, h;  // plot area
};

}  // namespace

std::string to_svg(const Report& rep) {
    const Results& res = rep.results;
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
    const double W = 1000, H = 520;
    const Panel panels[2] = {{80, 70, 360, 330}, {560, 70, 360, 330}};
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
        "<text x=\"{}\" y=\"24\" font-size=\"16\" font-weight=\"bold\" "
        "text-anchor=\"middle\">uringkit "
        "bench: {} {} {}, {} file, {} job{}</text>\n",
        W / 2, escape(cli::format_bytes(w.bs)), rw_name(w.rw), cache,
        escape(cli::format_bytes(rep.size)), rep.spec.numjobs, rep.spec.numjobs > 1 ? "s" : "");
    s += fmt::format(
        "<text x=\"{}\" y=\"44\" fill=\"#555\" text-anchor=\"middle\">Linux {}, {} cores, {} on {}"
        "</text>\n",
        W / 2, escape(rep.host.kernel), rep.host.cores, escape(rep.host.filesystem),
        escape(rep.host.device));

    // x: depth on a log2 scale (1, 2, 4 ... evenly spaced), so 1 and 32 both read.
    const double lo = std::log2(std::max(1u, depths.empty() ? 1u : depths.front()));
    const double hi = std::log2(std::max(1u, depths.empty() ? 1u : depths.back()));
    auto xpos = [&](const Panel& p, unsigned d) {
        if (hi == lo) return p.x + p.w / 2;
        return p.x + 20 + (std::log2(d) - lo) / (hi - lo) * (p.w - 40);
    };
    for (int k = 0; k < 2; ++k) {
        const Panel& p = panels[k];
        auto value = [&](const Row& r) { return k == 0 ? r.iops : r.cpu_us_per_io; };
        double vmax = 0;
        for (const Row& r : res.rows)
            if (r.status == Row::ok) vmax = std::max(vmax, value(r));
        if (vmax <= 0) vmax = 1;
        const double step = nice_step(vmax * 1.05, 5);
        const double top = std::ceil(vmax * 1.05 / step) * step;
        auto ypos = [&](double v) { return p.y + p.h - v / top * p.h; };
        s += fmt::format(
            "<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\" "
            "text-anchor=\"middle\">{}"
            "</text>\n",
            p.x + p.w / 2, p.y - 10,
            k == 0 ? "IOPS (higher is better)" : "CPU per I/O (lower is better)");
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
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">I/O depth (in flight per job)</text>\n",
            p.x + p.w / 2, p.y + p.h + 38);
        s += fmt::format(
            "<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
            p.x - 58, p.y + p.h / 2, k == 0 ? "I/Os per second" : "µs of CPU per I/O");
        for (std::size_t e = 0; e < engines.size(); ++e) {
            const char* color = kColors[e % std::size(kColors)];
            std::string points;
            for (unsigned d : depths)
                for (const Row& r : res.rows)
                    if (r.engine == engines[e] && r.iodepth == d && r.status == Row::ok) {
                        const double x = xpos(p, d), y = ypos(value(r));
                        points += fmt::format("{:.1f},{:.1f} ", x, y);
                        s += fmt::format(
                            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{} "
                            "depth "
                            "{}: {}</title></circle>\n",
                            x, y, color, engines[e], d,
                            tick_label(std::round(value(r) * 100) / 100));
                    }
            if (!points.empty())
                s += fmt::format(
                    "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                    points, color);
        }
    }
    // Legend: one row under both panels.
    const double ly = H - 50;
    const double slot =
        engines.empty() ? 0 : std::min(150.0, (W - 80) / static_cast<double>(engines.size()));
    for (std::size_t e = 0; e < engines.size(); ++e) {
        const double lx = 40 + slot * static_cast<double>(e);
        const char* color = kColors[e % std::size(kColors)];
        s += fmt::format(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"3\"/>"
            "<circle cx=\"{4}\" cy=\"{1}\" r=\"3.5\" fill=\"{3}\"/>\n",
            lx, ly, lx + 24, color, lx + 12);
        s +=
            fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", lx + 30, ly + 4, escape(engines[e]));
    }
    s += fmt::format(
        "<text x=\"40\" y=\"{}\" fill=\"#555\">CPU: user + system time of the whole process "
        "(kernel "
        "threads included) divided by I/Os; medians of {} run{} each</text>\n",
        H - 18, rep.spec.rounds, rep.spec.rounds > 1 ? "s" : "");
    s += "</svg>\n";
    return s;
}

}  // namespace uringkit::engines
