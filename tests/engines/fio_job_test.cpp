// fio's job files and option names as bench reads them (engines/fio_job.hpp):
// [global] inherited by the jobs after it, comments, fio's size suffixes
// (kb_base=1024: KiB is 1000), ${VAR}, the last of a repeated option, the
// ioengine mapping, and every unsupported option named in one message.
// Built into bench_table_test (no program of its own: CI links each one four
// times); the rules are pure, so no disk is touched.
#include "engines/fio_job.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace uringkit::engines;

namespace {

EnvLookup env(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        const auto it = vars.find(name);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
}

std::vector<FioWorkload> workloads(const std::string& text,
                                   std::map<std::string, std::string> vars = {}) {
    std::vector<FioWorkload> out;
    for (const FioJob& j : parse_fio_job_file(text, "job.fio", env(std::move(vars))))
        out.push_back(map_fio_job(j));
    return out;
}

std::string refusal(const std::string& text) {
    try {
        workloads(text);
    } catch (const FioJobError& e) {
        return e.what();
    }
    return "(accepted)";
}

}  // namespace

TEST(FioJob, GlobalsAreInheritedAndALaterGlobalAppliesOnlyAfterIt) {
    const auto w = workloads(
        "; a comment\n"
        "# another\n"
        "[global]\n"
        "rw=randread   ; fio strips a comment after a value too\n"
        "bs=8k\n"
        "size=1m\n"
        "[a]\n"
        "iodepth=4\n"
        "[global]\n"
        "bs=16k\n"
        "[b]\n"
        "rw=randwrite\n");
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[0].name, "a");
    EXPECT_EQ(w[0].rw, "randread");
    EXPECT_EQ(w[0].bs, 8192u);
    EXPECT_EQ(w[0].iodepth, "4");
    EXPECT_EQ(w[1].name, "b");
    EXPECT_EQ(w[1].rw, "randwrite");
    EXPECT_EQ(w[1].bs, 16384u);
    EXPECT_EQ(w[1].iodepth, "1");  // fio's default depth
    // Without time_based, fio stops at the end of size: 1 MiB / 16 KiB.
    EXPECT_EQ(w[1].ios, 64u);
    // "job options" are the section's own, as fio's JSON lists them.
    ASSERT_EQ(w[1].options.size(), 1u);
    EXPECT_EQ(w[1].options[0].first, "rw");
}

TEST(FioJob, SizesReadAsFiosDefaultKbBase) {
    EXPECT_EQ(parse_fio_size("4k"), 4096u);
    EXPECT_EQ(parse_fio_size("4K"), 4096u);
    EXPECT_EQ(parse_fio_size("4kb"), 4096u);
    EXPECT_EQ(parse_fio_size("1m"), 1048576u);
    EXPECT_EQ(parse_fio_size("2g"), 2ull << 30);
    // kb_base=1024 (fio's default) reads the IEC prefixes as powers of ten:
    // fio 3.33 does 1,000,000 bytes of I/O for size=1MiB.
    EXPECT_EQ(parse_fio_size("1MiB"), 1000000u);
    EXPECT_EQ(parse_fio_size("4KiB"), 4000u);
    EXPECT_EQ(parse_fio_size("512"), 512u);
    EXPECT_FALSE(parse_fio_size("1.5m"));
    EXPECT_FALSE(parse_fio_size("4x"));
    EXPECT_FALSE(parse_fio_size(""));
    EXPECT_NE(refusal("[a]\nsize=10%\n").find("job.fio:2: size=10%: a percentage"),
              std::string::npos);
}

TEST(FioJob, EnvironmentVariablesExpandAndAnUnsetOneIsRefused) {
    const auto w = workloads("[a]\nbs=${BS}\nsize=${SIZE}m\n", {{"BS", "64k"}, {"SIZE", "2"}});
    EXPECT_EQ(w[0].bs, 65536u);
    EXPECT_EQ(w[0].size, 2u << 20);
    try {
        workloads("[a]\nbs=${NOPE}\n");
        ADD_FAILURE() << "an unset variable was accepted";
    } catch (const FioJobError& e) {
        EXPECT_NE(std::string(e.what()).find("job.fio:2: ${NOPE} is not set"), std::string::npos)
            << e.what();
    }
}

TEST(FioJob, TheLastOfARepeatedOptionWins) {
    const auto w = workloads("[global]\nbs=4k\n[a]\nbs=8k\nbs=2k\nrw=read\nrw=randread\n");
    EXPECT_EQ(w[0].bs, 2048u);
    EXPECT_EQ(w[0].rw, "randread");
}

TEST(FioJob, EveryUnsupportedOptionIsNamedInOneMessage) {
    const std::string why =
        refusal("[a]\nbsrange=4k-16k\nverify=md5\nfoo=1\nrw=rw\nbs=4k,8k\nioengine=sync\n");
    EXPECT_NE(why.find("job.fio:2: bsrange=4k-16k: bench runs one block size"), std::string::npos)
        << why;
    EXPECT_NE(why.find("job.fio:3: verify=md5"), std::string::npos) << why;
    EXPECT_NE(why.find("job.fio:4: foo=1: not an option bench runs"), std::string::npos) << why;
    EXPECT_NE(why.find("job.fio:5: rw=rw"), std::string::npos) << why;
    EXPECT_NE(why.find("job.fio:6: bs=4k,8k"), std::string::npos) << why;
    EXPECT_NE(why.find("job.fio:7: ioengine=sync: fio's sync is lseek+read"), std::string::npos)
        << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << "one line: " << why;
    EXPECT_NE(refusal("bs=4k\n[a]\n").find("job.fio:1: bs=4k: an option before any section"),
              std::string::npos);
    EXPECT_NE(refusal("[global]\nbs=4k\n").find("no job section"), std::string::npos);
    EXPECT_NE(refusal("[a]\niodepth=0\n").find("job.fio:2: iodepth=0: give a depth"),
              std::string::npos);
    EXPECT_EQ(workloads("[a]\niodepth=1,8\n")[0].iodepth, "1,8");
}

TEST(FioJob, IoEnginesMapOnlyWhereTheSystemCallsMatch) {
    auto engine = [](const std::string& opts) {
        const auto w = workloads("[a]\n" + opts);
        return w[0].engines.empty() ? std::string("(all)") : w[0].engines[0];
    };
    EXPECT_EQ(engine("rw=read\n"), "(all)");
    EXPECT_EQ(engine("ioengine=psync\n"), "pread");
    EXPECT_EQ(engine("ioengine=libaio\n"), "libaio");
    EXPECT_EQ(engine("ioengine=io_uring\n"), "uring");
    EXPECT_EQ(engine("ioengine=io_uring\nfixedbufs\nregisterfiles\n"), "uring-reg");
    EXPECT_EQ(engine("ioengine=io_uring\nsqthread_poll=1\n"), "uring-sqpoll");
    EXPECT_EQ(engine("ioengine=io_uring\nhipri\n"), "uring-iopoll");
    EXPECT_EQ(engine("ioengine=io_uring_cmd\n"), "uring-cmd");
    EXPECT_EQ(engine("ioengine=io_uring_cmd\nfixedbufs\n"), "uring-cmd-reg");
    EXPECT_NE(refusal("[a]\nioengine=io_uring_cmd\nhipri\n").find("poll nothing"),
              std::string::npos);
    EXPECT_NE(refusal("[a]\nioengine=io_uring\nfixedbufs\n").find("add registerfiles=1"),
              std::string::npos);
    EXPECT_NE(refusal("[a]\nioengine=io_uring\nregisterfiles=1\n")
                  .find("no engine registers the file alone"),
              std::string::npos);
    EXPECT_NE(refusal("[a]\nioengine=pvsync\n").find("preadv"), std::string::npos);
    EXPECT_NE(refusal("[a]\nioengine=posixaio\n").find("--engines threadpool"), std::string::npos);
    EXPECT_NE(refusal("[a]\nioengine=libaio\nfixedbufs\n").find("options of ioengine=io_uring"),
              std::string::npos);
}

TEST(FioJob, CountsTimesAndBatches) {
    auto w = workloads(
        "[a]\nsize=1m\nbs=4k\nnumjobs=2\nnumber_ios=100\nramp_time=2\nruntime=500ms\n"
        "randseed=7\n")[0];
    EXPECT_EQ(w.ios, 200u);  // number_ios is per job; bench's --ios over all
    EXPECT_EQ(w.ramp_s, 2.0);
    EXPECT_EQ(w.runtime_s, 0.5);
    EXPECT_EQ(w.seed, 7u);
    EXPECT_EQ(w.batch, 1u);  // fio submits each I/O as it is ready by default
    w = workloads("[a]\nsize=1m\nbs=4k\nloops=3\n")[0];
    EXPECT_EQ(w.ios, 768u);
    w = workloads("[a]\nsize=1m\ntime_based\nruntime=1m\n")[0];
    EXPECT_FALSE(w.ios);
    EXPECT_EQ(w.runtime_s, 60.0);
    w = workloads("[a]\niodepth=8\niodepth_batch=8\niodepth_batch_complete_min=8\n")[0];
    EXPECT_EQ(w.batch, 8u);
    w = workloads("[a]\niodepth=8\niodepth_batch=0\niodepth_batch_complete=8\n")[0];
    EXPECT_EQ(w.batch, 8u);  // 0 is the depth
    EXPECT_NE(refusal("[a]\niodepth=8\niodepth_batch=0\n").find("(here 8 and 1)"),
              std::string::npos);
    EXPECT_NE(refusal("[a]\niodepth=8\niodepth_batch=8\n").find("the same value (here 8 and 1)"),
              std::string::npos);
    EXPECT_NE(refusal("[a]\ntime_based\n").find("without runtime="), std::string::npos);
    w = workloads("[a]\noffset=64k\nfilesize=1m\nrandrepeat=0\n")[0];
    EXPECT_EQ(w.offset, 65536u);
    EXPECT_EQ(w.size, 1u << 20);
    EXPECT_TRUE(w.fresh_seed);
}

TEST(FioJob, NameOnTheCommandLineStartsAJob) {
    const std::vector<FioSetting> cli = {{"bs", "8k", "--bs"},       {"name", "one", "--name"},
                                         {"rw", "randread", "--rw"}, {"name", "two", "--name"},
                                         {"rw", "write", "--rw"},    {"bs", "16k", "--bs"}};
    const auto jobs = join_command_line({}, cli);
    ASSERT_EQ(jobs.size(), 2u);
    const FioWorkload one = map_fio_job(jobs[0]), two = map_fio_job(jobs[1]);
    EXPECT_EQ(one.name, "one");
    EXPECT_EQ(one.rw, "randread");
    EXPECT_EQ(one.bs, 8192u);  // before the first --name: every job's
    EXPECT_EQ(two.name, "two");
    EXPECT_EQ(two.rw, "write");
    EXPECT_EQ(two.bs, 16384u);
    // A job file's jobs take the command line's settings after their own.
    const auto file = parse_fio_job_file("[f]\nbs=4k\nrw=read\n", "job.fio", env({}));
    const auto joined = join_command_line(file, {{"bs", "64k", "--bs"}});
    ASSERT_EQ(joined.size(), 1u);
    EXPECT_EQ(map_fio_job(joined[0]).bs, 65536u);
    // No file and no name: one job, whose options are the command line's.
    const auto plain = join_command_line({}, {{"ioengine", "psync", "--ioengine"}});
    ASSERT_EQ(plain.size(), 1u);
    const FioWorkload w = map_fio_job(plain[0]);
    EXPECT_EQ(w.name, "bench");
    ASSERT_EQ(w.options.size(), 1u);
    EXPECT_EQ(w.options[0].first, "ioengine");
    EXPECT_EQ(w.engines, std::vector<std::string>{"pread"});
}
