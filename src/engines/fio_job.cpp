// fio job files and option sets -> bench's workload (fio_job.hpp).
#include "engines/fio_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>

namespace uringkit::engines {
namespace {

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// ${VAR} -> its value; an unset one is an error naming it.
std::string expand_env(std::string_view text, const std::string& where, const EnvLookup& env) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        if (text.compare(i, 2, "${") == 0) {
            const std::size_t close = text.find('}', i + 2);
            if (close == std::string_view::npos)
                throw FioJobError{fmt::format("{}: '${{' without a closing '}}'", where)};
            const std::string var(text.substr(i + 2, close - i - 2));
            const auto value = env ? env(var) : std::nullopt;
            if (!value)
                throw FioJobError{fmt::format(
                    "{}: ${{{}}} is not set in the environment (fio would keep the text and "
                    "fail on the value)",
                    where, var)};
            out += *value;
            i = close + 1;
        } else {
            out += text[i++];
        }
    }
    return out;
}

std::optional<std::uint64_t> parse_uint(std::string_view text) noexcept {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return v;
}

std::optional<bool> parse_bool(std::string_view text) {
    const std::string t = lower(text);
    if (t == "1" || t == "true" || t == "on" || t == "yes") return true;
    if (t == "0" || t == "false" || t == "off" || t == "no") return false;
    return std::nullopt;
}

// fio's times: a number and us, ms, s, m (minutes), h or d; seconds without
// a suffix.  A decimal (0.5) is bench's own spelling, taken too.
std::optional<double> parse_fio_seconds(std::string_view text) noexcept {
    double n = 0;
    const auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), n, std::chars_format::fixed);
    if (ec != std::errc{} || text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
        return std::nullopt;
    const std::string_view unit = text.substr(static_cast<std::size_t>(end - text.data()));
    static constexpr std::pair<std::string_view, double> kUnits[] = {
        {"", 1}, {"s", 1}, {"us", 1e-6}, {"ms", 1e-3}, {"m", 60}, {"h", 3600}, {"d", 86400}};
    for (const auto& [name, scale] : kUnits)
        if (unit == name) return n * scale;
    return std::nullopt;
}

// Options that have no faithful meaning in bench, with the reason given.
constexpr std::pair<std::string_view, std::string_view> kRefused[] = {
    {"bsrange", "bench runs one block size per workload (bs=)"},
    {"blocksize_range", "bench runs one block size per workload (bs=)"},
    {"bssplit", "bench runs one block size per workload (bs=)"},
    {"directory", "bench runs on one file (filename=)"},
    {"opendir", "bench runs on one file (filename=)"},
    {"openfiles", "bench runs on one file (filename=)"},
    {"include", "bench reads one job file; put the included options in it"},
    {"percentage_random", "bench's offsets are all random or all sequential"},
    {"random_distribution", "bench draws offsets uniformly"},
    {"rate", "bench runs as fast as the engine goes"},
    {"rate_iops", "bench runs as fast as the engine goes"},
    {"verify", "bench's --verify checks offset stamps in its own temporary file"},
    {"fsync", "bench's workloads issue no syncs"},
    {"fdatasync", "bench's workloads issue no syncs"},
    {"unified_rw_reporting", "bench reports reads and writes apart, as fio's default"},
    {"iodepth_batch_complete_max", "bench waits for exactly its batch of completions"},
    {"iodepth_low", "bench refills the queue whenever a completion arrives"},
};

// fio's other spellings of the options bench maps.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"readwrite", "rw"},
    {"blocksize", "bs"},
    {"iodepth_batch", "iodepth_batch_submit"},
    {"iodepth_batch_complete", "iodepth_batch_complete_min"},
    {"io_limit", "io_size"},
    {"wait_for_previous", "stonewall"},
};

std::string canonical(std::string_view key) {
    std::string k = lower(key);
    std::replace(k.begin(), k.end(), '-', '_');
    for (const auto& [alias, name] : kAliases)
        if (k == alias) return std::string(name);
    return k;
}

}  // namespace

std::optional<std::uint64_t> parse_fio_size(std::string_view text) noexcept {
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    const auto n = parse_uint(text.substr(0, digits));
    if (!n) return std::nullopt;
    std::string suffix;
    for (char c : text.substr(digits))
        suffix += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (suffix.empty() || suffix == "b") return n;
    static constexpr std::string_view kPrefixes = "kmgtp";
    const std::size_t power = kPrefixes.find(suffix[0]);
    if (power == std::string_view::npos) return std::nullopt;
    const std::string_view rest = std::string_view(suffix).substr(1);
    std::uint64_t base;
    if (rest.empty() || rest == "b")
        base = 1024;
    else if (rest == "ib")
        base = 1000;  // kb_base=1024: IEC prefixes are the powers of ten
    else
        return std::nullopt;
    std::uint64_t v = *n;
    for (std::size_t i = 0; i <= power; ++i) {
        if (v > std::numeric_limits<std::uint64_t>::max() / base) return std::nullopt;
        v *= base;
    }
    return v;
}

std::vector<FioJob> parse_fio_job_file(std::string_view text, const std::string& path,
                                       const EnvLookup& env) {
    std::vector<FioJob> jobs;
    std::vector<FioSetting> global;
    enum { none, in_global, in_job } section = none;
    unsigned line_no = 0;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        ++line_no;
        const std::string where = fmt::format("{}:{}", path, line_no);
        // fio strips a comment wherever it starts, after a value too.
        line = line.substr(0, line.find_first_of(";#"));
        line = trim(line);
        if (line.empty()) continue;
        if (line.front() == '[') {
            if (line.back() != ']' || line.size() < 3)
                throw FioJobError{fmt::format("{}: {}: a section is [name]", where, line)};
            const std::string name(trim(line.substr(1, line.size() - 2)));
            if (name == "global") {
                section = in_global;
            } else {
                section = in_job;
                jobs.push_back(FioJob{name, global, {}});
            }
            continue;
        }
        if (section == none)
            throw FioJobError{fmt::format(
                "{}: {}: an option before any section; start with [global] or [jobname]", where,
                line)};
        const std::size_t eq = line.find('=');
        FioSetting s;
        s.key = std::string(trim(line.substr(0, eq)));
        s.value = eq == std::string_view::npos ? std::string("1")
                                               : expand_env(trim(line.substr(eq + 1)), where, env);
        s.where = where;
        (section == in_global ? global : jobs.back().own).push_back(std::move(s));
    }
    if (jobs.empty()) throw FioJobError{fmt::format("{}: no job section ([jobname]) to run", path)};
    return jobs;
}

std::vector<FioJob> join_command_line(std::vector<FioJob> file_jobs,
                                      const std::vector<FioSetting>& command_line) {
    std::vector<FioSetting> every;  // before the first name: for every job
    std::vector<FioJob> named;
    for (const FioSetting& s : command_line) {
        if (canonical(s.key) == "name") {
            named.push_back(FioJob{s.value, {}, {}});
            continue;
        }
        (named.empty() ? every : named.back().own).push_back(s);
    }
    // fio's options on bench's own command line: one job, and they are its own
    // (its JSON's "job options").
    if (file_jobs.empty() && named.empty()) return {FioJob{"bench", {}, every}};
    for (FioJob& job : file_jobs) job.own.insert(job.own.end(), every.begin(), every.end());
    for (FioJob& job : named) job.global.insert(job.global.end(), every.begin(), every.end());
    file_jobs.insert(file_jobs.end(), named.begin(), named.end());
    return file_jobs;
}

std::string engine_for_ioengine(std::string_view ioengine, const IoEngineFlags& f,
                                std::string& why) {
    const bool uring_option = f.fixedbufs || f.registerfiles || f.sqthread_poll || f.hipri;
    if (ioengine == "io_uring_cmd") {
        // fio's NVMe passthrough engine (cmd_type=nvme): uring-cmd; with
        // fixedbufs its registered-buffer form.
        if (f.sqthread_poll || f.hipri || f.registerfiles) {
            why =
                "bench's passthrough engines (uring-cmd, uring-cmd-reg) poll nothing and "
                "register no file: leave out sqthread_poll, hipri and registerfiles";
            return {};
        }
        return f.fixedbufs ? "uring-cmd-reg" : "uring-cmd";
    }
    if (ioengine != "io_uring" && uring_option) {
        why = "fixedbufs, registerfiles, sqthread_poll and hipri are options of ioengine=io_uring";
        return {};
    }
    if (ioengine == "psync") return "pread";
    if (ioengine == "libaio") return "libaio";
    if (ioengine == "sync")
        why = "fio's sync is lseek+read, two calls per I/O; the nearest is psync (bench's pread)";
    else if (ioengine == "pvsync" || ioengine == "pvsync2")
        why = "fio's " + std::string(ioengine) +
              " is preadv; the nearest is psync (bench's pread: one pread per I/O)";
    else if (ioengine == "posixaio")
        why =
            "fio's posixaio is glibc's aio_read; the nearest is bench's threadpool engine "
            "(pread on worker threads): give --engines threadpool";
    else if (ioengine != "io_uring")
        why =
            "bench runs psync, libaio, io_uring and io_uring_cmd (and its own engines with "
            "--engines)";
    if (!why.empty()) return {};
    if (f.hipri && (f.sqthread_poll || f.fixedbufs || f.registerfiles)) {
        why = "hipri is uring-iopoll, which polls with neither SQPOLL nor registrations";
        return {};
    }
    if (f.hipri) return "uring-iopoll";
    if (f.sqthread_poll) {
        // uring-sqpoll registers the file (as fio does under sqthread_poll), never buffers.
        if (f.fixedbufs) {
            why =
                "no engine polls with SQPOLL and registered buffers; uring-sqpoll registers "
                "the file only";
            return {};
        }
        return "uring-sqpoll";
    }
    if (f.fixedbufs && f.registerfiles) return "uring-reg";
    if (f.fixedbufs) {
        why =
            "no engine registers the buffers alone; uring-reg registers the file and the "
            "buffers: add registerfiles=1";
        return {};
    }
    if (f.registerfiles) {
        why =
            "no engine registers the file alone; uring-reg registers it with the buffers "
            "(add fixedbufs=1), uring-sqpoll with SQPOLL";
        return {};
    }
    return "uring";
}

FioWorkload map_fio_job(const FioJob& job) {
    FioWorkload w;
    w.name = job.name;
    // The last of each key wins; `where` says which line set it.
    std::map<std::string, FioSetting> last;
    std::vector<std::string> order;
    for (const auto* list : {&job.global, &job.own})
        for (const FioSetting& s : *list) {
            const std::string key = canonical(s.key);
            if (!last.count(key)) order.push_back(key);
            last[key] = s;
        }
    for (const FioSetting& s : job.own) w.options.emplace_back(s.key, s.value);
    w.given = order;

    std::vector<std::string> problems;
    auto refuse = [&](const FioSetting& s, std::string_view why) {
        problems.push_back(fmt::format("{}: {}={}: {}", s.where, s.key, s.value, why));
    };
    auto get = [&](const char* key) -> const FioSetting* {
        const auto it = last.find(key);
        return it == last.end() ? nullptr : &it->second;
    };
    auto number = [&](const char* key, std::uint64_t lo, std::uint64_t hi) {
        std::optional<std::uint64_t> v;
        if (const FioSetting* s = get(key)) {
            v = parse_uint(s->value);
            if (!v || *v < lo || *v > hi) {
                refuse(*s, fmt::format("give a whole number from {} to {}", lo, hi));
                v.reset();
            }
        }
        return v;
    };
    auto flag = [&](const char* key) {
        if (const FioSetting* s = get(key)) {
            const auto b = parse_bool(s->value);
            if (!b) refuse(*s, "give 1 or 0");
            return b.value_or(false);
        }
        return false;
    };
    auto size = [&](const char* key) {
        std::optional<std::uint64_t> v;
        if (const FioSetting* s = get(key)) {
            v = parse_fio_size(s->value);
            if (s->value.find('%') != std::string::npos)
                refuse(*s, "a percentage of the device: give bytes, like 256m");
            else if (s->value.find('-') != std::string::npos ||
                     s->value.find(':') != std::string::npos)
                refuse(*s, "a range: bench takes one size");
            else if (!v)
                refuse(*s, "not a size: a whole number with k, m, g or t (fio's 1024s), like 4k");
        }
        return v;
    };
    auto seconds = [&](const char* key) {
        std::optional<double> v;
        if (const FioSetting* s = get(key)) {
            v = parse_fio_seconds(s->value);
            if (!v) refuse(*s, "not a time: a number with us, ms, s, m or h, like 10s");
        }
        return v;
    };

    static constexpr std::string_view kKnown[] = {"name",
                                                  "description",
                                                  "filename",
                                                  "size",
                                                  "filesize",
                                                  "offset",
                                                  "rw",
                                                  "rwmixread",
                                                  "rwmixwrite",
                                                  "bs",
                                                  "iodepth",
                                                  "iodepth_batch_submit",
                                                  "iodepth_batch_complete_min",
                                                  "numjobs",
                                                  "direct",
                                                  "buffered",
                                                  "ioengine",
                                                  "fixedbufs",
                                                  "registerfiles",
                                                  "sqthread_poll",
                                                  "hipri",
                                                  "runtime",
                                                  "time_based",
                                                  "ramp_time",
                                                  "io_size",
                                                  "number_ios",
                                                  "loops",
                                                  "randseed",
                                                  "randrepeat",
                                                  "norandommap",
                                                  "thread",
                                                  "group_reporting",
                                                  "stonewall",
                                                  "new_group",
                                                  "kb_base",
                                                  "nrfiles",
                                                  "invalidate"};
    for (const std::string& key : order) {
        const FioSetting& s = last.at(key);
        const auto refused = std::find_if(std::begin(kRefused), std::end(kRefused),
                                          [&](const auto& r) { return r.first == key; });
        if (refused != std::end(kRefused))
            refuse(s, refused->second);
        else if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown))
            refuse(s, "not an option bench runs");
    }

    if (const FioSetting* s = get("name")) w.name = s->value;
    if (const FioSetting* s = get("filename")) {
        if (s->value.find(':') != std::string::npos)
            refuse(*s, "several files: bench runs on one file");
        w.filename = s->value;
    }
    if (const FioSetting* s = get("nrfiles"); s && s->value != "1")
        refuse(*s, "bench runs on one file (filename=)");
    if (const FioSetting* s = get("kb_base"); s && s->value != "1024")
        refuse(*s, "bench reads sizes as fio's default kb_base=1024 does");
    w.size = size("size");
    if (const auto filesize = size("filesize")) {
        if (!w.size)
            w.size = filesize;
        else if (*w.size != *filesize)
            refuse(*get("filesize"),
                   "with one file, fio's size and filesize differ only as the file's size; "
                   "give one of them");
    }
    w.offset = size("offset");
    if (const FioSetting* s = get("rw")) {
        static constexpr std::string_view kRw[] = {"read", "write", "randread", "randwrite",
                                                   "randrw"};
        if (std::find(std::begin(kRw), std::end(kRw), s->value) != std::end(kRw))
            w.rw = s->value;
        else if (s->value == "rw" || s->value == "readwrite")
            refuse(*s, "bench mixes reads and writes at random offsets only: use randrw");
        else
            refuse(*s, "bench runs read, write, randread, randwrite and randrw");
    }
    if (const auto v = number("rwmixread", 0, 100)) w.rwmixread = static_cast<unsigned>(*v);
    if (const auto v = number("rwmixwrite", 0, 100)) {
        if (get("rwmixread") && w.rwmixread != 100 - *v)
            refuse(*get("rwmixwrite"), "does not add up to 100 with rwmixread");
        w.rwmixread = static_cast<unsigned>(100 - *v);
    }
    if (const FioSetting* s = get("bs")) {
        if (s->value.find(',') != std::string::npos)
            refuse(*s, "separate read and write block sizes: bench runs one block size");
        else if (const auto v = size("bs"); v && (*v == 0 || *v > (64u << 20)))
            refuse(*s, "give a block size from 1 byte to 64m");
        else if (v)
            w.bs = static_cast<std::uint32_t>(*v);
    }
    if (const FioSetting* s = get("iodepth")) {
        // One depth, as fio takes; bench's list (1,8,32) is an extension.
        bool ok = !s->value.empty() && s->value.back() != ',';
        for (std::string_view rest = s->value; ok && !rest.empty();) {
            const std::size_t comma = rest.find(',');
            const auto d = parse_uint(rest.substr(0, comma));
            ok = d && *d >= 1 && *d <= 32768;
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        }
        if (ok)
            w.iodepth = s->value;
        else
            refuse(*s, "give a depth from 1 to 32768 (or bench's list, like 1,8,32)");
    }
    w.numjobs = static_cast<unsigned>(number("numjobs", 1, 1024).value_or(1));
    w.direct = flag("direct");
    if (get("buffered")) {
        const bool buffered = flag("buffered");
        if (get("direct") && w.direct == buffered) refuse(*get("buffered"), "contradicts direct=");
        w.direct = !buffered;
    }

    // fio submits iodepth_batch_submit I/Os at once and waits for at least
    // iodepth_batch_complete_min; bench's --batch is both.
    const auto submit = number("iodepth_batch_submit", 0, 65536);
    std::optional<std::uint64_t> complete;
    if (const FioSetting* s = get("iodepth_batch_complete_min"); s && s->value == "0")
        refuse(*s,
               "fio then polls for completions without waiting; bench always waits for its "
               "batch");
    else
        complete = number("iodepth_batch_complete_min", 1, 65536);
    w.batch = static_cast<unsigned>(submit.value_or(1));
    const unsigned reap = static_cast<unsigned>(complete.value_or(1));
    if (w.batch == 0) {
        // 0: the iodepth, one depth then.
        if (const auto depth = parse_uint(w.iodepth))
            w.batch = static_cast<unsigned>(*depth);
        else
            refuse(*get("iodepth_batch_submit"), "0 is the iodepth: give one iodepth");
    }
    if (w.batch && reap != w.batch && (submit || complete)) {
        refuse(*get(complete ? "iodepth_batch_complete_min" : "iodepth_batch_submit"),
               fmt::format("bench waits for as many completions as it submits at once; give "
                           "iodepth_batch_submit and iodepth_batch_complete_min the same value "
                           "(here {} and {})",
                           w.batch, reap));
    }

    IoEngineFlags flags;
    flags.fixedbufs = flag("fixedbufs");
    flags.registerfiles = flag("registerfiles");
    flags.sqthread_poll = flag("sqthread_poll");
    flags.hipri = flag("hipri");
    const FioSetting* ioengine = get("ioengine");
    if (ioengine || flags.fixedbufs || flags.registerfiles || flags.sqthread_poll || flags.hipri) {
        std::string why;
        const std::string engine =
            engine_for_ioengine(ioengine ? ioengine->value : "psync", flags, why);
        const FioSetting* named = ioengine;
        for (const char* key : {"fixedbufs", "registerfiles", "sqthread_poll", "hipri"})
            if (!named) named = get(key);
        if (engine.empty())
            refuse(*named, why);
        else
            w.engines.push_back(engine);
    }

    const bool time_based = w.time_based = flag("time_based");
    w.runtime_s = seconds("runtime");
    if (w.runtime_s && *w.runtime_s <= 0) refuse(*get("runtime"), "give a time above 0");
    if (time_based && !w.runtime_s)
        refuse(*get("time_based"), "without runtime= fio would run until stopped");
    w.ramp_s = seconds("ramp_time");
    w.loops = static_cast<unsigned>(number("loops", 1, 1000000).value_or(1));
    const auto number_ios = w.number_ios = number("number_ios", 1, UINT64_MAX / 1024);
    const auto io_size = w.io_size = size("io_size");
    // Without time_based fio stops at the end of size (or io_size), loops
    // times over; number_ios stops it earlier.  Counts are per job: bench's
    // are over all jobs.
    std::optional<std::uint64_t> per_job;
    if (!time_based) {
        if (io_size)
            per_job = *io_size / w.bs * w.loops;
        else if (w.size)
            per_job = (*w.size / w.bs) * w.loops;
        else
            w.ios_from_file = true;
    }
    if (number_ios) {
        per_job = per_job ? std::min(*per_job, *number_ios) : *number_ios;
        w.ios_from_file = false;
    }
    if (per_job) {
        if (*per_job == 0)
            problems.push_back(fmt::format("{}: fewer bytes than one block (bs={}): no I/O to do",
                                           job.name, w.bs));
        w.ios = *per_job * w.numjobs;
    }

    if (const auto seed = number("randseed", 0, UINT64_MAX)) w.seed = seed;
    if (get("randrepeat") && !flag("randrepeat")) w.fresh_seed = !w.seed;
    if (get("invalidate") && !flag("invalidate"))
        refuse(*get("invalidate"),
               "fio then leaves whatever is cached; bench loads the file first (--cache warm) "
               "or drops it (--cache cold, fio's default invalidate=1)");
    flag("norandommap");  // bench draws with replacement, which is fio's norandommap
    flag("thread");       // bench's jobs are always threads
    flag("group_reporting");
    flag("stonewall");
    flag("new_group");

    if (!problems.empty()) {
        std::string message;
        for (const std::string& p : problems) message += (message.empty() ? "" : "; ") + p;
        throw FioJobError{message};
    }
    return w;
}

}  // namespace uringkit::engines
