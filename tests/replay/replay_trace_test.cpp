// The trace reader on synthetic strace outputs and fio iologs checked into
// tests/replay/data/: every event of every file is compared, in order.
#include <fcntl.h>
#include <linux/falloc.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "replay/trace.hpp"

using namespace uringkit::replay;

namespace {

const std::string data_dir = std::string(REPLAY_DATA_DIR) + "/";

// One line per event: "thread op file offset length result", "?" for an
// unknown offset; flags only where they are set.
std::vector<std::string> lines_of(TraceReader& r) {
    std::vector<std::string> out;
    while (auto e = r.next()) {
        std::string s =
            fmt::format("{} {} {} {} {} {}", e->thread, op_name(e->op), r.files().at(e->file),
                        e->offset == unknown_offset ? std::string("?") : std::to_string(e->offset),
                        e->length, e->result);
        if (e->flags != 0) s += fmt::format(" flags={:#o}", e->flags);
        out.push_back(s);
    }
    return out;
}

std::uint64_t skipped(const Summary& s, SkipReason r) {
    return s.skipped[static_cast<std::size_t>(r)];
}
std::uint64_t calls(const Summary& s, Op op) {
    return s.calls[static_cast<std::size_t>(op)];
}

}  // namespace

TEST(ReplayStrace, UnfinishedCallsJoinTheirResumeAndThreadsShareTheTable) {
    auto r = TraceReader::open(data_dir + "threads_unfinished.strace");
    EXPECT_EQ(r.format(), Format::strace);
    std::vector<Event> events;
    while (auto e = r.next()) events.push_back(*e);
    std::vector<std::string> got;
    for (const auto& e : events)
        got.push_back(fmt::format("{} {} {} {} {} {}", e.thread, op_name(e.op),
                                  r.files().at(e.file), e.offset, e.length, e.result));
    // Thread 101 appears before clone3 returns and already shares 100's
    // table (CLONE_FILES): fd 3 is a.bin there, and the b.bin it opens is
    // read by 100.  Strings hold quotes, commas and ") = ".
    EXPECT_EQ(got, (std::vector<std::string>{
                       "100 open /data/a.bin 0 0 3",
                       "101 read /data/a.bin 4096 6 6",
                       "100 read /data/a.bin 8192 4096 4096",
                       "101 write /data/a.bin 100 9 9",
                       "101 open /data/b.bin 0 0 4",
                       "100 read /data/b.bin 0 100 10",
                       "101 close /data/a.bin 0 0 0",
                   }));
    // A joined call starts at its first line, lasts what -T says on its
    // resume, and is reported at the resume's line.
    ASSERT_EQ(events.size(), 7u);
    EXPECT_EQ(events[2].time_ns, 1700000000'000400000);
    EXPECT_EQ(events[2].duration_ns, 200'000);
    EXPECT_EQ(events[2].line, 7u);
    EXPECT_EQ(events[3].time_ns, 1700000000'000500000);
    EXPECT_EQ(events[3].line, 8u);
    EXPECT_EQ(events[0].duration_ns, 10'000);

    const Summary& s = r.summary();
    EXPECT_EQ(skipped(s, SkipReason::unfinished), 1u);     // fsync cut short by the exit
    EXPECT_EQ(skipped(s, SkipReason::orphan_resume), 1u);  // pid 103's resume without a start
    EXPECT_EQ(s.skipped_total(), 2u);
    EXPECT_EQ(s.threads, 2u);
    EXPECT_EQ(s.threads_seen, 3u);
    EXPECT_EQ(s.files, 2u);
    EXPECT_EQ(s.bytes_read, 6u + 4096u + 10u);
    EXPECT_EQ(s.bytes_written, 9u);
    EXPECT_EQ(s.first_ns, 1700000000'000000000);
    EXPECT_EQ(s.last_ns, 1700000000'001400000);
    EXPECT_EQ(s.io_duration_ns, 10'000 + 5'000 + 200'000 + 200'000 + 3'000 + 2'000 + 2'000);
    EXPECT_EQ(r.state().pending, 0u);
    EXPECT_EQ(r.state().live_threads, 1u);  // 103, which never exited
}

TEST(ReplayStrace, ForkCopiesTheTableButSharesPositions) {
    auto r = TraceReader::open(data_dir + "fork_vfork.strace");
    // The child's close does not close the parent's fd 3; the child's read
    // moves the position both see (one open file description); fd 4, opened
    // in the child only, is unknown to the parent.  vfork's child appears
    // before vfork returns and gets a copy as well.
    EXPECT_EQ(lines_of(r), (std::vector<std::string>{
                               "200 open /data/f.log 0 0 3 flags=02",
                               "200 read /data/f.log 0 10 10",
                               "201 read /data/f.log 10 5 5",
                               "201 open /data/child.only 0 0 4",
                               "201 close /data/f.log 0 0 0",
                               "200 read /data/f.log 15 3 3",
                               "202 close /data/f.log 0 0 0",
                               "200 write /data/f.log 18 1 1",
                           }));
    EXPECT_EQ(skipped(r.summary(), SkipReason::inherited_descriptor), 1u);
    EXPECT_EQ(r.summary().skipped_total(), 1u);
    EXPECT_EQ(r.state().live_threads, 0u);
    EXPECT_EQ(r.state().descriptors, 0u);
}

TEST(ReplayStrace, DupFcntlLseekAndPositionsFollowTheDescription) {
    auto r = TraceReader::open(data_dir + "dup_seek.strace");
    // No pid column (strace without -f): thread 0.
    EXPECT_EQ(
        lines_of(r),
        (std::vector<std::string>{
            "0 open /data/s.db 0 0 3 flags=02",
            "0 read /data/s.db 0 8 8",         // position 8
            "0 write /data/s.db 100 4 4",      // after SEEK_SET 100
            "0 read /data/s.db 100 4 4",       // SEEK_CUR -4, through dup's fd 4
            "0 read /data/s.db 65536 4096 0",  // SEEK_END: lseek's result
            "0 write /data/s.db 5 2 2",        // pwrite on F_DUPFD's fd 10
            "0 close /data/s.db 0 0 0",        // fd 3; 4, 5, 7, 10 still open
            "0 write /data/s.db 65536 5 5",    // writev on fd 5 (F_DUPFD_CLOEXEC of dup2's 7)
            "0 read /data/s.db 65541 30 0",    // readv on fd 7
            "0 write /data/s.db 65541 1 1",    // pwritev2 offset -1: the position
            "0 read /data/s.db 1024 512 512",  // preadv
            "0 ftruncate /data/s.db 0 8192 0",
            fmt::format("0 fallocate /data/s.db 0 1048576 0 flags={:#o}", FALLOC_FL_KEEP_SIZE),
            "0 fsync /data/s.db 0 0 0",
            "0 fdatasync /data/s.db 0 0 0",
            fmt::format("0 open /data/log 0 0 6 flags={:#o}", O_WRONLY | O_APPEND),
            "0 write /data/log ? 5 5",     // O_APPEND: the end is not in the trace
            "0 write /data/log ? 1 1",     // pwrite appends too (pwrite(2), BUGS)
            "0 write /data/log 4096 4 4",  // after lseek and F_SETFL without O_APPEND
        }));
    const Summary& s = r.summary();
    EXPECT_EQ(s.unknown_offsets, 2u);
    EXPECT_EQ(s.seeks_from_result, 1u);
    EXPECT_EQ(s.skipped_total(), 0u);
    EXPECT_EQ(s.bytes_read, 8u + 4u + 512u);
    EXPECT_EQ(s.bytes_written, 4u + 2u + 5u + 1u + 5u + 1u + 4u);
    EXPECT_EQ(calls(s, Op::read), 5u);
    EXPECT_EQ(calls(s, Op::write), 7u);
    EXPECT_EQ(s.threads_seen, 1u);
}

TEST(ReplayStrace, SocketsPipesDevicesAndFailuresAreCountedAndLeftOut) {
    auto r = TraceReader::open(data_dir + "skipped_y.strace");
    // -y paths name the files (the result's path over the argument), '>'
    // inside a path is strace's \76; a descriptor -y shows as a pipe where
    // the table had a file was reused by an untraced call.
    EXPECT_EQ(lines_of(r),
              (std::vector<std::string>{
                  "300 open /home/u/data/x.bin 0 0 5",
                  "300 read /home/u/data/x.bin 0 16 16",
                  "300 open /home/u/a,b>c 0 0 8 flags=02",
                  "300 read /home/u/a,b>c 0 1 1",
                  fmt::format("300 open /home/u/data/y.bin 0 0 11 flags={:#o}", O_RDWR | O_CREAT),
                  "300 close /home/u/data/x.bin 0 0 0",
              }));
    const Summary& s = r.summary();
    EXPECT_EQ(skipped(s, SkipReason::failed), 2u);  // the missing file's open, an EAGAIN read
    EXPECT_EQ(skipped(s, SkipReason::socket), 2u);  // socket:[...] and -yy's TCP:[...->...]
    EXPECT_EQ(skipped(s, SkipReason::pipe), 3u);
    EXPECT_EQ(skipped(s, SkipReason::device), 4u);  // /dev/pts/0 twice, /dev/null's open and write
    EXPECT_EQ(skipped(s, SkipReason::pseudo_file), 1u);
    EXPECT_EQ(skipped(s, SkipReason::inherited_descriptor), 1u);  // fd 2, a file never opened here
    EXPECT_EQ(skipped(s, SkipReason::other_call), 1u);
    EXPECT_EQ(skipped(s, SkipReason::directory), 1u);
    EXPECT_EQ(s.skipped_total(), 15u);
    const std::string text = describe(s);
    EXPECT_NE(text.find("skipped 15 calls"), std::string::npos) << text;
    EXPECT_NE(text.find("       3  pipes"), std::string::npos) << text;
}

TEST(ReplayStrace, RelativePathsDirfdsAndCloseRange) {
    auto r = TraceReader::open(data_dir + "paths_close_range.strace");
    // A path relative to AT_FDCWD stays as recorded (the cwd is not in the
    // trace); one relative to a directory descriptor is joined to it.
    EXPECT_EQ(lines_of(r),
              (std::vector<std::string>{
                  "400 open rel/file.txt 0 0 3",
                  "400 open /srv/db/t.dat 0 0 5 flags=02",
                  "400 open /srv/x 0 0 6",
                  fmt::format("400 open /srv/new 0 0 7 flags={:#o}", O_CREAT | O_WRONLY | O_TRUNC),
                  "400 open /abs/path 0 0 8",
                  "400 open we\"ird, name 0 0 9",
                  fmt::format("400 open /srv/o2 0 0 10 flags={:#o}", O_CLOEXEC),
                  // close_range(3, 6): the files among 3..6, lowest first (4 is the directory)
                  "400 close rel/file.txt 0 0 0",
                  "400 close /srv/db/t.dat 0 0 0",
                  "400 close /srv/x 0 0 0",
                  // CLOSE_RANGE_CLOEXEC closes nothing: fd 7 still writes
                  "400 write /srv/new 0 1 1",
                  "400 close /srv/new 0 0 0",
                  "400 close /abs/path 0 0 0",
                  "400 close we\"ird, name 0 0 0",
                  "400 close /srv/o2 0 0 0",
              }));
    EXPECT_EQ(skipped(r.summary(), SkipReason::directory), 1u);
    EXPECT_EQ(skipped(r.summary(), SkipReason::inherited_descriptor),
              1u);                                   // fd 7 after the last close_range
    EXPECT_FALSE(r.summary().first_ns.has_value());  // no -t: no span
    EXPECT_EQ(r.state().descriptors, 0u);
}

TEST(ReplayStrace, AMalformedLineIsAnErrorNamingItUnlessLenient) {
    auto r = TraceReader::open(data_dir + "malformed.strace");
    ASSERT_TRUE(r.next());  // open
    ASSERT_TRUE(r.next());  // read
    try {
        r.next();
        FAIL() << "line 3 is not strace output";
    } catch (const TraceError& e) {
        EXPECT_EQ(e.line(), 3u);
        EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("this line is not strace output"), std::string::npos)
            << e.what();
    }

    auto lenient = TraceReader::open(data_dir + "malformed.strace", Options{.lenient = true});
    EXPECT_EQ(lines_of(lenient), (std::vector<std::string>{
                                     "500 open /m/a 0 0 3",
                                     "500 read /m/a 0 3 3",
                                     "500 read /m/a 3 1 1",
                                 }));
    EXPECT_EQ(skipped(lenient.summary(), SkipReason::malformed),
              2u);  // the prose and the call without ')'
    EXPECT_EQ(lenient.summary().lines, 5u);
}

TEST(ReplayStrace, UnreadableInputsAreErrors) {
    std::istringstream empty("\n\n");
    EXPECT_THROW(TraceReader{empty}, TraceError);
    std::istringstream v1("fio version 1 iolog\n");
    EXPECT_THROW(TraceReader{v1}, TraceError);
    std::istringstream prose("Hello\n");
    try {
        TraceReader r(prose);
        FAIL() << "prose is not a trace";
    } catch (const TraceError& e) {
        EXPECT_EQ(e.line(), 1u);
    }
    EXPECT_THROW(TraceReader::open(data_dir + "no-such-trace"), std::system_error);
}

TEST(ReplayIolog, Version2) {
    auto r = TraceReader::open(data_dir + "v2.iolog");
    EXPECT_EQ(r.format(), Format::fio_iolog_v2);
    EXPECT_EQ(lines_of(r), (std::vector<std::string>{
                               "0 open /data/f1 0 0 0",
                               "0 open /data/f2 0 0 0",
                               "0 write /data/f1 0 4096 4096",
                               "0 read /data/f2 8192 512 512",
                               "0 fsync /data/f1 0 0 0",
                               "0 fdatasync /data/f2 0 0 0",
                               "0 trim /data/f1 4096 4096 4096",
                               "0 close /data/f1 0 0 0",
                               "0 close /data/f2 0 0 0",
                           }));
    EXPECT_EQ(skipped(r.summary(), SkipReason::iolog_wait), 1u);
    EXPECT_EQ(r.summary().files, 2u);
    EXPECT_EQ(r.summary().bytes_written, 4096u);
}

TEST(ReplayIolog, Version3TimestampsAreMicroseconds) {
    auto r = TraceReader::open(data_dir + "v3.iolog");
    EXPECT_EQ(r.format(), Format::fio_iolog_v3);
    std::vector<Event> ev;
    while (auto e = r.next()) ev.push_back(*e);
    ASSERT_EQ(ev.size(), 6u);
    const Op ops[] = {Op::open, Op::read, Op::write, Op::fsync, Op::fdatasync, Op::close};
    const std::int64_t times_us[] = {1052, 1069, 2747, 11721, 12001, 21051};
    for (std::size_t i = 0; i < ev.size(); ++i) {
        EXPECT_EQ(ev[i].op, ops[i]) << i;
        EXPECT_EQ(ev[i].time_ns, times_us[i] * 1000) << i;
        EXPECT_EQ(ev[i].file, 0u);
        EXPECT_EQ(ev[i].line, i + 3);
    }
    EXPECT_EQ(ev[1].offset, 61440u);
    EXPECT_EQ(ev[1].length, 4096u);
    EXPECT_EQ(ev[2].offset, 774144u);
    EXPECT_EQ(ev[3].offset, 0u);  // fio logs a sync with the last offset; a sync has none
    EXPECT_EQ(r.files(), std::vector<std::string>{"/data/f"});
    EXPECT_EQ(r.summary().first_ns, 233'000);  // the add line counts for the span
    EXPECT_EQ(r.summary().last_ns, 21'051'000);
}

TEST(ReplayIolog, BadLinesNameTheirNumber) {
    std::istringstream no_time("fio version 3 iolog\n10 /f add\n/f open\n");
    TraceReader r(no_time);
    try {
        r.next();
        FAIL() << "a v3 line without a timestamp";
    } catch (const TraceError& e) {
        EXPECT_EQ(e.line(), 3u);
    }
    std::istringstream never_added("fio version 2 iolog\n/f read 0 4096\n");
    TraceReader r2(never_added);
    EXPECT_THROW(r2.next(), TraceError);
    std::istringstream lenient_in("fio version 2 iolog\n/f add\n/f frobnicate 0 1\n/f read 0 1\n");
    TraceReader r3(lenient_in, Options{.lenient = true});
    EXPECT_EQ(lines_of(r3), std::vector<std::string>{"0 read /f 0 1 1"});
    EXPECT_EQ(skipped(r3.summary(), SkipReason::malformed), 1u);
}
