// The replay of bench --replay against the real kernel: traces written here
// compile into the steps they say; a read after an overlapping write (and
// anything after a sync) never starts before it, in every engine and depth;
// replayed reads carry the file's bytes; writes go only where allowed; the
// compiled program spills to disk and reads back the same steps.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "replaybench/replaybench.hpp"

using namespace uringkit::replaybench;
namespace fs = std::filesystem;

namespace {

class ReplayBench : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-replay-bench-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    // A file of `size` random bytes.
    std::string make_file(const std::string& name, std::size_t size) {
        const std::string path = (dir_ / name).string();
        std::mt19937 rng(42);
        std::string bytes(size, '\0');
        for (char& c : bytes) c = static_cast<char>(rng());
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
    static std::string read_all(const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    static Program compile_text(const std::string& text, std::size_t spill = std::size_t{1} << 18) {
        std::istringstream in(text);
        TraceReader reader(in);
        return compile(reader, spill);
    }
    static std::vector<Step> steps_of(const Program& p, std::size_t t) {
        std::vector<Step> out;
        Program::Cursor c(p, t);
        while (const Step* s = c.peek()) {
            out.push_back(*s);
            c.pop();
        }
        return out;
    }
    fs::path dir_;
};

std::string step_text(const Program& p, const Step& s) {
    return fmt::format("{} {} {} {}", op_name(s.op),
                       fs::path(p.files()[s.file].path).filename().string(), s.offset, s.length);
}

// The dependency rule as the issue states it, written out here rather than
// taken from depends(), so a wrong depends() cannot hide from the test.
bool must_wait(const Step& a, const Step& b) {
    if (a.file != b.file) return false;
    const auto sync = [](Op op) {
        return op == Op::fsync || op == Op::fdatasync || op == Op::sync_range;
    };
    const bool a_sync = sync(a.op), b_sync = sync(b.op);
    if (a_sync || b_sync) return true;
    const bool overlap = a.offset < b.offset + b.length && b.offset < a.offset + a.length;
    return overlap && (a.op == Op::write || b.op == Op::write);
}

// Every engine a trace replays through (bench's names, iopoll aside).
const char* const kAllEngines[] = {"pread",     "threadpool",   "libaio",   "uring",
                                   "uring-reg", "uring-sqpoll", "liburing", "auto"};

// An engine may be unavailable here only for a reason outside the replay:
// the kernel refusing SQPOLL, a peer library missing from the build.
void expect_allowed_unavailable(const Result& r, const char* engine) {
#ifdef URINGKIT_HAVE_LIBAIO
    const bool have_libaio = true;
#else
    const bool have_libaio = false;
#endif
#ifdef URINGKIT_HAVE_LIBURING
    const bool have_liburing = true;
#else
    const bool have_liburing = false;
#endif
    const std::string e = engine;
    for (const Unavailable& u : r.unavailable) {
        const bool not_built =
            u.why.find("was not found when uringkit was built") != std::string::npos &&
            ((e == "libaio" && !have_libaio) || (e == "liburing" && !have_liburing));
        EXPECT_TRUE(e == "uring-sqpoll" || not_built) << engine << ": " << u.why;
    }
}

// A strace line: pid, time, call.
std::string line(int pid, double t, const std::string& call) {
    return fmt::format("{} {:.6f} {}\n", pid, t, call);
}

}  // namespace

TEST_F(ReplayBench, CompilesEachThreadsStepsInOrderWithMarksAndTruncation) {
    const std::string a = (dir_ / "a.bin").string(), b = (dir_ / "b.bin").string();
    std::string t;
    t += line(10, 1.0, fmt::format("openat(AT_FDCWD, \"{}\", O_RDONLY) = 3 <0.000010>", a));
    t += line(10, 1.001, "pread64(3, \"\"..., 4096, 8192) = 4096 <0.000005>");
    t += line(10, 1.002, "read(3, \"\"..., 100) = 100 <0.000005>");
    t += line(10, 1.003, "read(3, \"\"..., 100) = 50 <0.000005>");
    t += line(
        11, 1.004,
        fmt::format("openat(AT_FDCWD, \"{}\", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4 <0.000010>", b));
    t += line(11, 1.005, "write(4, \"xy\", 2) = 2 <0.000005>");
    t += line(11, 1.006, "fdatasync(4) = 0 <0.000100>");
    t += line(11, 1.0065,
              "sync_file_range(4, 0, 2, SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE) = 0 "
              "<0.00001>");
    t += line(10, 1.007, "close(3) = 0 <0.000001>");
    const Program p = compile_text(t);
    ASSERT_EQ(p.threads(), 2u);
    std::vector<std::string> got0, got1;
    for (const Step& s : steps_of(p, 0)) got0.push_back(step_text(p, s));
    for (const Step& s : steps_of(p, 1)) got1.push_back(step_text(p, s));
    EXPECT_EQ(got0, (std::vector<std::string>{"open a.bin 0 0", "read a.bin 8192 4096",
                                              "read a.bin 0 100", "read a.bin 100 100",
                                              "close a.bin 0 0"}));
    // O_TRUNC on a descriptor opened for writing empties the file: a truncation to 0.
    EXPECT_EQ(got1,
              (std::vector<std::string>{"open b.bin 0 0", "ftruncate b.bin 0 0", "write b.bin 0 2",
                                        "fdatasync b.bin 0 0", "sync_file_range b.bin 0 2"}));
    EXPECT_EQ(steps_of(p, 1).back().pad[0], SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE);
    EXPECT_EQ(p.shape().reads, 3u);
    EXPECT_EQ(p.shape().writes, 2u);  // the write and the truncation
    EXPECT_EQ(p.shape().syncs, 2u);
    EXPECT_EQ(p.shape().sequential, 1u);  // the second read(2) starts where the first ended
    EXPECT_TRUE(p.shape().timed);
    EXPECT_EQ(steps_of(p, 0)[1].at_ns, 1000000);
    EXPECT_EQ(p.files()[0].extent, 12288u);  // the pread's end
    EXPECT_EQ(p.files()[1].extent, 2u);
}

TEST_F(ReplayBench, DependencyRules) {
    const auto s = [](Op op, std::uint32_t file, std::uint64_t off, std::uint64_t len) {
        Step x;
        x.op = op;
        x.file = file;
        x.offset = off;
        x.length = len;
        return x;
    };
    EXPECT_FALSE(
        depends(s(Op::read, 0, 0, 4096), s(Op::read, 0, 0, 4096)));  // reads never wait for reads
    EXPECT_TRUE(depends(s(Op::write, 0, 0, 4096), s(Op::read, 0, 4095, 10)));  // overlapping: RAW
    EXPECT_TRUE(depends(s(Op::read, 0, 0, 4096), s(Op::write, 0, 100, 1)));    // WAR
    EXPECT_TRUE(depends(s(Op::write, 0, 0, 4096), s(Op::write, 0, 0, 1)));     // WAW
    EXPECT_FALSE(
        depends(s(Op::write, 0, 0, 4096), s(Op::read, 0, 4096, 4096)));  // adjacent, no overlap
    EXPECT_FALSE(depends(s(Op::write, 0, 0, 4096), s(Op::read, 1, 0, 4096)));  // another file
    EXPECT_TRUE(depends(s(Op::read, 0, 0, 1), s(Op::fsync, 0, 0, 0)));         // syncs are barriers
    EXPECT_TRUE(depends(s(Op::fdatasync, 0, 0, 0), s(Op::read, 0, 1 << 20, 1)));
    EXPECT_TRUE(
        depends(s(Op::close, 0, 0, 0), s(Op::open, 0, 0, 0)));  // close then open keep order
    EXPECT_TRUE(depends(s(Op::ftruncate, 0, 0, 0), s(Op::read, 0, 0, 1)));
    EXPECT_FALSE(depends(s(Op::fsync, 0, 0, 0), s(Op::read, 1, 0, 1)));
}

// Reads after overlapping writes, syncs among them, two threads: in every
// engine and depth, each step starts only after every earlier step of its
// thread it depends on has completed; the writes land in the scratch copy.
TEST_F(ReplayBench, NoStepStartsBeforeWhatItDependsOnInEveryEngineAndDepth) {
    const std::string f = make_file("data.bin", 1 << 20);
    std::string t;
    double now = 5.0;
    for (int pid : {20, 21})
        t += line(pid, now,
                  fmt::format("openat(AT_FDCWD, \"{}\", O_RDWR) = {} <0.00001>", f, pid - 17));
    std::mt19937 rng(7);
    for (int i = 0; i < 400; ++i) {
        const int pid = 20 + (i % 2);
        const int fd = pid - 17;
        const auto off = static_cast<unsigned>((rng() % 64) * 4096 + (rng() % 2) * 512);
        now += 0.0001;
        switch (rng() % 6) {
            case 0:
                t += line(pid, now,
                          fmt::format("pwrite64({}, \"\"..., 8192, {}) = 8192 <0.00001>", fd, off));
                break;
            case 1:
                t += line(
                    pid, now,
                    i % 4 == 1
                        ? fmt::format("fsync({}) = 0 <0.00001>", fd)
                        : fmt::format(
                              "sync_file_range({}, {}, 4096, SYNC_FILE_RANGE_WRITE) = 0 <0.00001>",
                              fd, off));
                break;
            default:
                t += line(pid, now,
                          fmt::format("pread64({}, \"\"..., 4096, {}) = 4096 <0.00001>", fd, off));
        }
    }
    const Program p = compile_text(t);
    ASSERT_EQ(p.threads(), 2u);
    const std::string before = read_all(f);
    for (const char* engine : kAllEngines) {
        for (unsigned depth : {1u, 4u, 32u}) {
            Config c;
            c.engines = {engine};
            c.modes = {Mode::batched};
            c.depths = {depth};
            c.rounds = 1;
            c.scratch = dir_.string();
            OrderLog log;
            const Result r = run(p, c, nullptr, {}, &log);
            if (!r.unavailable.empty()) {
                expect_allowed_unavailable(r, engine);
                continue;
            }
            ASSERT_EQ(r.runs.size(), 1u);
            EXPECT_EQ(r.runs[0].error, "") << engine << " depth " << depth;
            ASSERT_EQ(log.threads.size(), 2u);
            unsigned checked = 0;
            for (std::size_t th = 0; th < 2; ++th) {
                const std::vector<Step> steps = steps_of(p, th);
                const auto& e = log.threads[th];
                for (std::size_t j = 0; j < steps.size(); ++j) {
                    if (!is_io(steps[j].op)) continue;
                    ASSERT_GT(e[j].completed, 0u) << engine << " depth " << depth << " step " << j;
                    for (std::size_t i = 0; i < j; ++i) {
                        if (!is_io(steps[i].op) || !must_wait(steps[i], steps[j])) continue;
                        ++checked;
                        ASSERT_GT(e[j].issued, e[i].completed)
                            << engine << " depth " << depth << ": " << step_text(p, steps[j])
                            << " (step " << j << ") started before " << step_text(p, steps[i])
                            << " (step " << i << ") completed";
                    }
                }
            }
            EXPECT_GT(checked, 100u);
            // Batched at depth > 1 really overlaps reads (else the check above says nothing).
            if (std::string(engine) != "pread" && depth > 1) {  // auto: the ring once depth > 1
                bool overlapped = false;
                const auto& e = log.threads[0];
                for (std::size_t j = 1; j < e.size() && !overlapped; ++j)
                    overlapped =
                        e[j].issued && e[j - 1].completed && e[j].issued < e[j - 1].completed;
                EXPECT_TRUE(overlapped) << engine << " depth " << depth;
            }
        }
    }
    EXPECT_EQ(read_all(f), before) << "the writes went to the scratch copy, not the file";
    for (const auto& entry : fs::directory_iterator(dir_))
        EXPECT_EQ(entry.path().filename(), "data.bin") << "scratch copies are removed";
}

TEST_F(ReplayBench, ReplayedReadsCarryTheFilesBytes) {
    const std::string f = make_file("r.bin", 3 << 20);
    std::string t;
    t += line(1, 1.0, fmt::format("openat(AT_FDCWD, \"{}\", O_RDONLY) = 3 <0.00001>", f));
    std::mt19937 rng(3);
    for (int i = 0; i < 300; ++i)
        t += line(1, 1.0 + i * 1e-4,
                  fmt::format("pread64(3, \"\"..., {}, {}) = {} <0.00001>", 1000 + rng() % 70000,
                              rng() % (3 << 20), 1));
    const Program p = compile_text(t);
    for (const char* engine : kAllEngines) {
        Config c;
        c.engines = {engine};
        c.modes = {Mode::as_recorded, Mode::batched};
        c.depths = {16};
        c.rounds = 1;
        c.verify = true;
        const Result r = run(p, c);
        expect_allowed_unavailable(r, engine);
        if (!r.unavailable.empty()) continue;
        ASSERT_EQ(r.runs.size(), 2u) << engine;
        for (const uringkit::replaybench::Run& run : r.runs) {
            EXPECT_EQ(run.error, "");
            EXPECT_EQ(run.ios, 301u - 1);  // every pread (the open is a mark)
            EXPECT_GT(run.bytes, 1000u * 300 / 2);
            EXPECT_EQ(run.verify_failures, 0u) << engine << " " << mode_name(run.mode);
        }
    }
}

TEST_F(ReplayBench, AWriteWithoutPermissionIsRefusedAndNothingIsTouched) {
    const std::string f = make_file("w.bin", 65536);
    struct stat before {};
    ASSERT_EQ(::stat(f.c_str(), &before), 0);
    std::string t;
    t += line(1, 1.0, fmt::format("openat(AT_FDCWD, \"{}\", O_RDWR) = 3 <0.00001>", f));
    t += line(1, 1.1, "pwrite64(3, \"\"..., 4096, 0) = 4096 <0.00001>");
    t += line(1, 1.2, "ftruncate(3, 100) = 0 <0.00001>");
    const Program p = compile_text(t);
    Config c;
    c.rounds = 1;
    try {
        (void)run(p, c);
        FAIL() << "a write was replayed without --allow-write or --scratch";
    } catch (const ReplayError& e) {
        EXPECT_EQ(e.kind(), ReplayError::usage);
        EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("--allow-write"), std::string::npos) << e.what();
    }
    struct stat after {};
    ASSERT_EQ(::stat(f.c_str(), &after), 0);
    EXPECT_EQ(after.st_size, 65536);
    EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    // With --allow-write the file itself is written: the truncation shows.
    c.allow_write = true;
    c.engines = {"uring"};
    c.modes = {Mode::as_recorded};
    const Result r = run(p, c);
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].error, "");
    EXPECT_EQ(fs::file_size(f), 100u);
}

TEST_F(ReplayBench, MissingFilesAreNamedAndScratchCopiesTakeTheRecordedSize) {
    const std::string gone = (dir_ / "gone.bin").string();
    std::string t;
    t += line(1, 1.0, fmt::format("openat(AT_FDCWD, \"{}\", O_RDONLY) = 3 <0.00001>", gone));
    t += line(1, 1.1, "pread64(3, \"\"..., 4096, 1048576) = 4096 <0.00001>");
    const Program p = compile_text(t);
    Config c;
    c.rounds = 1;
    c.engines = {"pread"};
    c.modes = {Mode::as_recorded};
    try {
        (void)run(p, c);
        FAIL() << "a missing file was not reported";
    } catch (const ReplayError& e) {
        EXPECT_EQ(e.kind(), ReplayError::bad_input);
        EXPECT_NE(std::string(e.what()).find(gone), std::string::npos) << e.what();
    }
    fs::create_directory(dir_ / "scratch");
    c.scratch = (dir_ / "scratch").string();
    const Result r = run(p, c);
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].error, "");
    EXPECT_EQ(r.runs[0].bytes, 4096u) << "the copy is as long as the recorded read needs";
    EXPECT_TRUE(fs::is_empty(dir_ / "scratch"));
    EXPECT_FALSE(fs::exists(gone));
}

TEST_F(ReplayBench, TimedModeKeepsTheRecordedPace) {
    const std::string f = make_file("t.bin", 65536);
    std::string t;
    t += line(1, 2.0, fmt::format("openat(AT_FDCWD, \"{}\", O_RDONLY) = 3 <0.00001>", f));
    for (int i = 0; i < 11; ++i)
        t += line(1, 2.0 + i * 0.02, "pread64(3, \"\"..., 4096, 0) = 4096 <0.00001>");
    const Program p = compile_text(t);
    for (const char* engine : kAllEngines) {
        Config c;
        c.engines = {engine};
        c.modes = {Mode::timed};
        c.depths = {8};
        c.rounds = 1;
        const Result r = run(p, c);
        expect_allowed_unavailable(r, engine);
        if (!r.unavailable.empty()) continue;
        ASSERT_EQ(r.runs.size(), 1u) << engine;
        EXPECT_EQ(r.runs[0].ios, 11u) << engine;
        // The last read is due 0.2 s after the first.
        EXPECT_GE(r.runs[0].seconds, 0.199) << engine;
        EXPECT_LT(r.runs[0].seconds, 2.0) << engine;
    }
    // An untimed trace refuses timed mode with the reason.
    const Program untimed = compile_text(fmt::format(
        "openat(AT_FDCWD, \"{}\", O_RDONLY) = 3\npread64(3, \"\"..., 10, 0) = 10\n", f));
    Config c;
    c.modes = {Mode::timed};
    EXPECT_THROW((void)run(untimed, c), ReplayError);
}

TEST_F(ReplayBench, TheCompiledProgramSpillsToDiskAndReadsBackTheSameSteps) {
    std::string t = "openat(AT_FDCWD, \"/x/y\", O_RDONLY) = 3\n";
    constexpr int kReads = 50000;
    for (int i = 0; i < kReads; ++i)
        t += fmt::format("pread64(3, \"\"..., {}, {}) = 1\n", 512 + i % 7, i * 13);
    const Program p = compile_text(t, 4096);
    EXPECT_GT(p.spilled_bytes(), 40000u * sizeof(Step));
    EXPECT_LT(p.memory_bytes(), 3 * 4096 * sizeof(Step))
        << "memory holds a few chunks, not the trace";
    const std::vector<Step> steps = steps_of(p, 0);
    ASSERT_EQ(steps.size(), kReads + 1u);
    for (int i = 0; i < kReads; ++i) {
        ASSERT_EQ(steps[i + 1].offset, i * 13u) << i;
        ASSERT_EQ(steps[i + 1].length, 512u + i % 7) << i;
    }
    // A second cursor, rewound, reads the same.
    Program::Cursor c(p, 0);
    for (int i = 0; i < 10000; ++i) c.pop();
    c.rewind();
    ASSERT_NE(c.peek(), nullptr);
    EXPECT_EQ(c.peek()->op, Op::open);
}

TEST_F(ReplayBench, FioIologReplaysWithItsSyncs) {
    const std::string f = make_file("fio.bin", 1 << 20);
    std::string t = fmt::format("fio version 2 iolog\n{0} add\n{0} open\n", f);
    for (int i = 0; i < 1200; ++i) t += fmt::format("{} read {} 4096\n", f, (i * 7 % 256) * 4096);
    t += fmt::format("{} write 0 4096\n{} sync 0 0\n{} close\n", f, f, f);
    const Program p = compile_text(t);
    Config c;
    c.rounds = 3;
    c.scratch = dir_.string();
    c.engines = {"pread", "uring"};
    const Result r = run(p, c);
    ASSERT_EQ(r.runs.size(), 3u * 2 * 2);
    for (const uringkit::replaybench::Run& run : r.runs) {
        EXPECT_EQ(run.error, "");
        EXPECT_EQ(run.ios, 1202u);
    }
    // uring at depth 32 makes far fewer system calls than one per I/O.
    for (const uringkit::replaybench::Run& run : r.runs)
        if (run.engine == "uring" && run.mode == Mode::batched) {
            EXPECT_LT(run.syscalls_per_io(), 0.5);
        }
    const auto comparisons = compare(r);
    EXPECT_EQ(comparisons.size(), 4u);  // uring against pread, two cells, two metrics
    const std::string report = format_report(p, r, comparisons);
    EXPECT_NE(report.find("As your program issues it"), std::string::npos) << report;
    EXPECT_NE(report.find("With up to 32 in flight per thread"), std::string::npos) << report;
}

// Each engine counts its own system calls: one per step for pread, one
// io_uring_enter per batch for the rings, io_submit + io_getevents per batch
// for libaio, and at least the workers' one call per step for the pool.
TEST_F(ReplayBench, EachEngineCountsItsSystemCalls) {
    const std::string f = make_file("calls.bin", 4 << 20);
    std::string t = fmt::format("fio version 2 iolog\n{0} add\n{0} open\n", f);
    for (int i = 0; i < 4000; ++i)
        t += fmt::format("{} read {} 4096\n", f, (i * 7919 % 1024) * 4096);
    const Program p = compile_text(t);
    for (const char* engine : kAllEngines) {
        Config c;
        c.engines = {engine};
        c.modes = {Mode::as_recorded, Mode::batched};
        c.depths = {32};
        c.rounds = 1;
        const Result r = run(p, c);
        expect_allowed_unavailable(r, engine);
        if (!r.unavailable.empty()) continue;
        ASSERT_EQ(r.runs.size(), 2u) << engine;
        const std::string e = engine;
        for (const uringkit::replaybench::Run& run : r.runs) {
            ASSERT_EQ(run.error, "") << engine;
            ASSERT_EQ(run.ios, 4000u) << engine;
            EXPECT_EQ(run.bytes, 4000u * 4096) << engine;
            const double per_io = run.syscalls_per_io();
            const bool one_at_a_time = run.mode == Mode::as_recorded;
            if (e == "pread" || (e == "auto" && one_at_a_time)) {
                EXPECT_EQ(run.syscalls, run.ios) << engine;
            } else if (e == "threadpool") {
                EXPECT_GE(run.syscalls, run.ios) << engine << ": every step is a worker's pread";
            } else if (e == "libaio") {
                if (one_at_a_time)
                    EXPECT_NEAR(per_io, 2.0, 0.01) << engine;
                else
                    EXPECT_LT(per_io, 0.2) << engine;
            } else if (e !=
                       "uring-sqpoll") {  // SQPOLL enters only to wait, and its thread may sleep
                if (one_at_a_time)
                    EXPECT_NEAR(per_io, 1.0, 0.01) << engine;
                else
                    EXPECT_LT(per_io, 0.1) << engine;
            }
        }
    }
}

TEST_F(ReplayBench, IopollIsNamedUnavailableWithTheReasonAndUnknownEnginesAreRefused) {
    const std::string f = make_file("io.bin", 65536);
    const Program p =
        compile_text(fmt::format("fio version 2 iolog\n{0} add\n{0} open\n{0} read 0 4096\n", f));
    Config c;
    c.engines = {"pread", "uring-iopoll"};
    c.modes = {Mode::as_recorded};
    c.rounds = 1;
    const Result r = run(p, c);
    ASSERT_EQ(r.unavailable.size(), 1u);
    EXPECT_EQ(r.unavailable[0].engine, "uring-iopoll");
    EXPECT_NE(r.unavailable[0].why.find("O_DIRECT"), std::string::npos) << r.unavailable[0].why;
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].engine, "pread");
    c.engines = {"pread", "uring-fast"};
    try {
        (void)run(p, c);
        FAIL() << "an unknown engine was accepted";
    } catch (const ReplayError& e) {
        EXPECT_EQ(e.kind(), ReplayError::usage);
        EXPECT_NE(std::string(e.what()).find("uring-fast"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("liburing"), std::string::npos) << e.what();
    }
}
