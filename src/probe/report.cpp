// The probe report for people (an aligned table) and for scripts (JSON:
// docs/json.md, docs/schema/probe.json).  Both render the same Report; neither decides anything.
#include "cli/size.hpp"
#include "document/header.hpp"
#include "probe/kernel.hpp"
#include "probe/probe.hpp"
#include "uringkit/sys/uapi.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <string_view>
#include <vector>

namespace uringkit::probe {
namespace {

constexpr std::size_t kWidth = 100;
constexpr std::size_t kLabel = 20;  // width of the label column of the header block

// Appends `words` to out, wrapped to kWidth, continuation lines indented by `indent`.
void wrap(std::string& out, const std::vector<std::string>& words, std::size_t indent) {
    std::size_t col = indent;
    bool first = true;
    for (const std::string& w : words) {
        if (!first && col + 1 + w.size() > kWidth) {
            out += '\n';
            out.append(indent, ' ');
            col = indent;
            first = true;
        }
        if (!first) {
            out += ' ';
            ++col;
        }
        out += w;
        col += w.size();
        first = false;
    }
    out += '\n';
}

std::vector<std::string> split_words(std::string_view text) {
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t j = text.find(' ', i);
        const std::size_t end = j == std::string_view::npos ? text.size() : j;
        if (end > i) words.emplace_back(text.substr(i, end - i));
        i = end + 1;
    }
    return words;
}

void line(std::string& out, std::string_view label, std::string_view text) {
    out += fmt::format("{:<{}}", label, kLabel);
    wrap(out, split_words(text), kLabel);
}

std::string opcode_label(unsigned op) {
    const char* n = sys::opcode_name(op);
    return n ? std::string(n) : fmt::format("op{}", op);
}

std::vector<std::string> feature_names(std::uint32_t features, std::vector<unsigned>* unknown) {
    std::vector<std::string> names;
    for (unsigned bit = 0; bit < 32; ++bit) {
        if (!((features >> bit) & 1)) continue;
        if (const char* n = sys::feature_name(bit))
            names.emplace_back(n);
        else if (unknown)
            unknown->push_back(bit);
        else
            names.push_back(fmt::format("bit{}", bit));
    }
    return names;
}

// Known opcodes (up to the kernel's last_op) that the kernel does not support.
std::vector<unsigned> unsupported_opcodes(const Report& r) {
    std::vector<unsigned> out;
    if (!r.last_op) return out;
    std::size_t k = 0;
    for (unsigned op = 0; op < sys::opcode::known_count; ++op) {
        while (k < r.opcodes.size() && r.opcodes[k] < op) ++k;
        if (k < r.opcodes.size() && r.opcodes[k] == op) continue;
        out.push_back(op);
    }
    return out;
}

std::optional<bool> min_kernel_ok(const Report& r) {
    const auto v = parse_kernel_release(r.kernel_release);
    if (!v) return std::nullopt;
    return *v >= kMinKernel;
}

std::string min_kernel_meaning(const Report& r) {
    const auto ok = min_kernel_ok(r);
    if (!ok) return fmt::format("{} (this release does not say its version)", kMinKernel.str());
    if (*ok) return fmt::format("{}: this kernel has it", kMinKernel.str());
    return fmt::format("{}: {}", kMinKernel.str(), below_minimum_notice(r.kernel_release));
}

std::string disabled_meaning(const std::optional<int>& v) {
    if (!v) return "no such sysctl (kernels before 6.6 have no switch)";
    switch (*v) {
        case 0:
            return "0: every process may create rings";
        case 1:
            return "1: only kernel.io_uring_group members and CAP_SYS_ADMIN may create rings";
        case 2:
            return "2: io_uring is disabled for every process";
        default:
            return fmt::format("{}: a value this probe does not know", *v);
    }
}

std::string seccomp_meaning(const std::optional<int>& v) {
    if (!v) return "unknown (no Seccomp line in /proc/self/status)";
    switch (*v) {
        case 0:
            return "0: no filter on this process";
        case 1:
            return "1: strict mode";
        case 2:
            return "2: a filter is installed (it may or may not allow io_uring)";
        default:
            return std::to_string(*v);
    }
}

std::string limit_text(const std::optional<std::uint64_t>& v) {
    return v ? cli::format_bytes(*v) : std::string("unlimited");
}

std::string memlock_meaning(const Report& r) {
    return fmt::format("{} (hard {}); {}", limit_text(r.memlock_soft), limit_text(r.memlock_hard),
                       r.cap_ipc_lock ? "CAP_IPC_LOCK: registered memory is not charged to it"
                                      : "no CAP_IPC_LOCK: registered buffers count against it");
}

}  // namespace

std::string format_table(const Report& r) {
    std::string out;
    line(out, "kernel", r.kernel_release + " " + r.machine);
    line(out, "minimum kernel", min_kernel_meaning(r));
    line(out, "io_uring_disabled", disabled_meaning(r.io_uring_disabled));
    line(out, "seccomp", seccomp_meaning(r.seccomp_mode));
    line(out, "RLIMIT_MEMLOCK", memlock_meaning(r));
    if (!r.setup_ok) {
        line(out, "io_uring_setup",
             fmt::format("FAILS with {} ({}): {}", errno_name(r.setup_err),
                         std::strerror(r.setup_err), r.setup_reason));
        out += "\nio_uring is NOT usable here.\n";
        return out;
    }
    line(out, "io_uring_setup", "works");
    line(out, "features",
         fmt::format("{:#010x}: {}", r.features,
                     fmt::join(feature_names(r.features, nullptr), " ")));
    if (r.last_op) {
        std::vector<std::string> names;
        for (unsigned op : r.opcodes) names.push_back(opcode_label(op));
        line(out, "opcodes",
             fmt::format("{} supported (last_op {}): {}", r.opcodes.size(), *r.last_op,
                         fmt::join(names, " ")));
        if (const auto missing = unsupported_opcodes(r); !missing.empty()) {
            std::vector<std::string> miss;
            for (unsigned op : missing) miss.push_back(opcode_label(op));
            line(out, "not supported", fmt::format("{}", fmt::join(miss, " ")));
        }
    } else {
        line(out, "opcodes",
             fmt::format("no opcode probe ({}): IORING_REGISTER_PROBE needs 5.6",
                         errno_name(r.opcode_probe_err)));
    }
    line(out, "trial directory", r.dir);

    out += '\n';
    std::size_t name_w = 5;
    for (const Trial& t : r.trials) name_w = std::max(name_w, t.name.size());
    constexpr std::size_t result_w = 13;  // "unsupported" and two spaces
    out += fmt::format("{:<{}}  {:<{}}{}\n", "trial", name_w, "result", result_w, "detail");
    for (const Trial& t : r.trials) {
        out += fmt::format("{:<{}}  {:<{}}", t.name, name_w, outcome_name(t.outcome), result_w);
        wrap(out, split_words(t.detail), name_w + 2 + result_w);
    }
    std::size_t ok = 0;
    for (const Trial& t : r.trials) ok += t.outcome == Outcome::ok;
    if (!r.usable())
        out +=
            "\nio_uring is NOT usable here: a ring can be set up but a NOP does not come back "
            "(see the nop trial).\n";
    else
        out += fmt::format("\nio_uring is usable here: {} of {} trials ok.\n", ok, r.trials.size());
    return out;
}

std::string to_json(const Report& r, int indent) {
    using nlohmann::ordered_json;
    auto opt = [](const auto& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
    // Schema 2: the shared header (docs/json.md); memlock's limits say their unit.
    ordered_json j = document::header("uringkit probe", 2);
    j["usable"] = r.usable();
    j["kernel"] = {{"release", r.kernel_release}, {"machine", r.machine}};
    j["min_kernel"] = kMinKernel.str();
    j["min_kernel_ok"] = opt(min_kernel_ok(r));
    j["io_uring_disabled"] = opt(r.io_uring_disabled);
    j["seccomp"] = opt(r.seccomp_mode);
    j["memlock"] = {{"soft_bytes", opt(r.memlock_soft)},
                    {"hard_bytes", opt(r.memlock_hard)},
                    {"cap_ipc_lock", r.cap_ipc_lock}};
    ordered_json setup;
    setup["ok"] = r.setup_ok;
    setup["errno"] = r.setup_ok ? ordered_json(nullptr) : ordered_json(r.setup_err);
    setup["errno_name"] =
        r.setup_ok ? ordered_json(nullptr) : ordered_json(errno_name(r.setup_err));
    setup["block"] = setup_block_name(r.setup_block);
    setup["reason"] = r.setup_ok ? ordered_json(nullptr) : ordered_json(r.setup_reason);
    j["setup"] = setup;
    if (r.setup_ok) {
        std::vector<unsigned> unknown_bits;
        const auto names = feature_names(r.features, &unknown_bits);
        j["features"] = {{"mask", r.features}, {"names", names}, {"unknown_bits", unknown_bits}};
        ordered_json ops;
        ops["last_op"] = opt(r.last_op);
        ops["probe_errno"] = r.last_op ? ordered_json(nullptr) : ordered_json(r.opcode_probe_err);
        ordered_json supported = ordered_json::array();
        for (unsigned op : r.opcodes)
            supported.push_back({{"code", op}, {"name", opcode_label(op)}});
        ops["supported"] = supported;
        ordered_json missing = ordered_json::array();
        for (unsigned op : unsupported_opcodes(r))
            missing.push_back({{"code", op}, {"name", opcode_label(op)}});
        ops["unsupported"] = missing;
        j["opcodes"] = ops;
    } else {
        j["features"] = nullptr;
        j["opcodes"] = nullptr;
    }
    j["dir"] = r.setup_ok ? ordered_json(r.dir) : ordered_json(nullptr);
    ordered_json trials = ordered_json::array();
    for (const Trial& t : r.trials) {
        ordered_json x;
        x["name"] = t.name;
        x["summary"] = t.summary;
        x["result"] = outcome_name(t.outcome);
        const auto needs = feature_need(t.name);
        x["needs"] = needs ? ordered_json(needs->str()) : ordered_json(nullptr);
        x["errno"] = t.err ? ordered_json(t.err) : ordered_json(nullptr);
        x["errno_name"] = t.err ? ordered_json(errno_name(t.err)) : ordered_json(nullptr);
        x["detail"] = t.detail;
        trials.push_back(x);
    }
    j["trials"] = trials;
    return j.dump(indent) + "\n";
}

}  // namespace uringkit::probe
