// One run of one engine at one depth: every job on a thread of its own,
// through three meeting points (set up, ramp over, measuring over), while
// this thread samples their progress; then the jobs' figures merged.
#include "engines/run_once.hpp"

#include "measure/offload_counter.hpp"
#include "uringkit/sys/page_cache.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace uringkit::engines::detail {
namespace {

struct alignas(64) JobState {
    std::unique_ptr<EngineJob> job;
    std::string unavailable, failure, note, ran;
    PhaseResult ramp, result;
    LatencyHistogram latency;
    int fd = -1;
    int tid = 0;  // the job's thread: the io-wq hand-off counter watches it
    std::atomic<std::uint64_t> progress{0};
};

double seconds_of(const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// The jobs' shared clock.  Three meeting points: all set up (ramp starts),
// ramp over (measuring starts), measuring over.  step() runs once at each,
// while every job waits, so the clock and getrusage snapshots bracket
// exactly the measured phase of all jobs.
struct Phases {
    enum Stage : int { setup, ramp, measuring, done };
    std::atomic<int> stage{setup};
    bool skip = false;  // some job could not start: nothing runs
    std::uint64_t ramp_deadline = 0, measure_deadline = UINT64_MAX, t0 = 0, t1 = 0;
    rusage r0{}, r1{};
    double cached_at_start = -1;
    int meetings = 0;
    // The kernel threads' cost over the measured phase (io_workers.hpp); the
    // sampler thread also samples it, hence the lock (never on a job's path:
    // only at the meeting points and in the sampler).
    std::mutex kernel_threads_lock;
    measure::KernelThreadTracker kernel_threads;
    bool tracking = false;
    measure::TracepointCounter offload_counter;
    std::uint64_t offloads_at_start = 0, offloads_at_end = 0;
    std::string offload_why;

    // Opens the hand-off counter on the submitting threads: the jobs' and
    // any SQPOLL thread's (which submits for its ring).
    void start_counting(JobState* state, unsigned jobs) {
        const std::uint64_t id = measure::async_work_tracepoint_id(offload_why);
        if (id == 0) return;
        std::vector<int> tids;
        for (unsigned i = 0; i < jobs; ++i) tids.push_back(state[i].tid);
        for (const measure::KernelThreadFigures& k : measure::kernel_threads_now())
            if (k.kind == measure::KernelThreadKind::sq_poll) tids.push_back(k.tid);
        if (!offload_counter.open(id, tids, offload_why)) return;
        offload_why.clear();
        offloads_at_start = offload_counter.read();
    }
    void track_kernel_threads(bool start) {
        std::lock_guard lk(kernel_threads_lock);
        if (start)
            kernel_threads.begin();
        else
            kernel_threads.end();
        tracking = start;
    }
    void sample_kernel_threads() noexcept {
        try {
            std::lock_guard lk(kernel_threads_lock);
            if (tracking) kernel_threads.sample();
        } catch (const std::exception&) {
            // A sample missed: the next one, or the end, reads them again.
        }
    }

    void step(const RunContext& rc, JobState* state, unsigned jobs) noexcept {
        const BenchSpec& spec = rc.spec;
        switch (meetings++) {
            case 0:
                for (unsigned i = 0; i < jobs; ++i)
                    if (!state[i].job) skip = true;
                ramp_deadline = now_ns() + static_cast<std::uint64_t>(spec.ramp_s * 1e9);
                stage.store(ramp, std::memory_order_relaxed);
                break;
            case 1:
                // Cold means cold when measuring starts: the ramp has read
                // the very blocks the measured phase reads first (the offsets
                // restart), so drop them now, outside the timed window.
                if (spec.cache == Cache::cold && !spec.workload.direct) rc.target.drop_cache();
                if (!spec.workload.direct) {
                    sys::PageCacheStat pc;
                    if (sys::page_cache_stat(state[0].fd, spec.workload.offset, spec.workload.size,
                                             pc) == 0 &&
                        pc.pages > 0)
                        cached_at_start =
                            static_cast<double>(pc.cached) / static_cast<double>(pc.pages);
                }
                for (unsigned i = 0; i < jobs; ++i)
                    state[i].progress.store(0, std::memory_order_relaxed);
                try {
                    start_counting(state, jobs);
                    track_kernel_threads(true);
                } catch (const std::exception& e) {
                    // Out of memory for a /proc read: the run goes on unattributed.
                    offload_why = e.what();
                }
                ::getrusage(RUSAGE_SELF, &r0);
                t0 = now_ns();
                if (spec.runtime_s > 0)
                    measure_deadline = t0 + static_cast<std::uint64_t>(spec.runtime_s * 1e9);
                stage.store(measuring, std::memory_order_relaxed);
                break;
            default:
                t1 = now_ns();
                ::getrusage(RUSAGE_SELF, &r1);
                if (offload_counter.counting()) offloads_at_end = offload_counter.read();
                offload_counter.close();
                try {
                    track_kernel_threads(false);
                } catch (const std::exception&) {
                    // The workers keep their figures of the last sample.
                }
                stage.store(done, std::memory_order_relaxed);
                break;
        }
    }
};

// The jobs' threads and how this thread learns that all have ended.
struct Crew {
    JobState* state;
    unsigned jobs;
    std::mutex m;
    std::condition_variable cv;
    unsigned finished = 0;
};

// One job's life on its own thread: start the engine, ramp, measure, and
// tear the engine down on the thread that owns its ring.
template <class Barrier>
void run_job(const RunContext& rc, const EngineInfo& engine, const JobContext& base, unsigned i,
             Crew& crew, Phases& ph, Barrier& sync) {
    const BenchSpec& spec = rc.spec;
    JobState& st = crew.state[i];
    JobContext ctx = base;
    ctx.fd = st.fd;
    ctx.job = i;
    st.tid = static_cast<int>(::gettid());
    try {
        st.job = engine.start(ctx);
    } catch (const EngineUnavailable& e) {
        st.unavailable = e.what();
    } catch (const std::exception& e) {
        st.failure = e.what();
    }
    sync.arrive_and_wait();
    if (!ph.skip && spec.ramp_s > 0) {
        Phase p;
        p.deadline_ns = ph.ramp_deadline;
        p.stop = rc.stop;
        p.progress = &st.progress;
        st.ramp = st.job->run(p);
    }
    sync.arrive_and_wait();
    if (!ph.skip && st.ramp.error == 0) {
        Phase p;
        p.deadline_ns = ph.measure_deadline;
        p.stop = rc.stop;
        p.progress = &st.progress;
        p.latency = spec.latency ? &st.latency : nullptr;
        p.restart_offsets = true;
        if (spec.ios) p.max_ios = spec.ios / crew.jobs + (i < spec.ios % crew.jobs ? 1 : 0);
        st.result = st.job->run(p);
    }
    sync.arrive_and_wait();
    if (st.job) {
        st.note = st.job->note();
        st.ran = std::string(st.job->ran());
    }
    st.job.reset();  // the ring is torn down on the thread that owns it
    std::lock_guard lk(crew.m);
    ++crew.finished;
    crew.cv.notify_one();
}

// The whole benchmark's time left: from the pace of the runs so far
// (set-up, cache warming and drops included) once one has finished, else
// from the planned length of the runs.  Negative: unknown (I/O-count runs).
double eta_s(const RunContext& rc, std::uint64_t now, double elapsed_s, double run_s) {
    if (run_s <= 0) return -1;
    const double in_run = std::min(1.0, elapsed_s / run_s);
    const double done = rc.run - 1 + in_run;
    const double left = rc.runs - done;
    if (rc.run > 1 && rc.start_ns) {
        const double spent = static_cast<double>(now - rc.start_ns) / 1e9;
        return spent / done * left;
    }
    return left * run_s;
}

// Sampled here until every job has ended, off the jobs' paths: the
// completed count every window (for the steady-state check) and the
// progress line every fifth window.
std::vector<Window> sample_until_done(const RunContext& rc, unsigned depth, Crew& crew,
                                      Phases& ph) {
    std::vector<Window> windows;
    const BenchSpec& spec = rc.spec;
    const double run_s = spec.runtime_s > 0 ? spec.ramp_s + spec.runtime_s : 0;
    std::uint64_t last_ios = 0, last_ns = now_ns();
    const std::uint64_t run_start = last_ns;
    std::uint64_t window_ios = 0, window_ns = 0;
    bool measuring = false;
    unsigned tick = 0;
    const auto window = std::chrono::microseconds(static_cast<long>(measure::kSteadyWindowS * 1e6));
    std::unique_lock lk(crew.m);
    while (!crew.cv.wait_for(lk, window, [&] { return crew.finished == crew.jobs; })) {
        std::uint64_t ios = 0;
        for (unsigned i = 0; i < crew.jobs; ++i)
            ios += crew.state[i].progress.load(std::memory_order_relaxed);
        const std::uint64_t now = now_ns();
        const int stg = ph.stage.load(std::memory_order_relaxed);
        if (stg == Phases::measuring) {
            // The first sample in the measured phase opens the first
            // window; a window is counted only while the phase lasts.
            if (measuring)
                windows.push_back({static_cast<double>(now - window_ns) / 1e9, ios - window_ios});
            measuring = true;
            window_ios = ios;
            window_ns = now;
            // Keeps the figures of an io-wq worker that may exit before the end.
            lk.unlock();
            ph.sample_kernel_threads();
            lk.lock();
        }
        // The first sample of every run draws the line, then every fifth:
        // a default run lasts 0.2 s, so a line drawn only every fifth
        // window (0.25 s) never showed.
        if (!rc.progress || (tick++ % 5 != 0)) continue;
        if (ios < last_ios) last_ios = 0;  // the counters restart when measuring starts
        Progress p{};
        p.engine = rc.label;
        p.iodepth = depth;
        p.run = rc.run;
        p.runs = rc.runs;
        p.ramp = stg < Phases::measuring;
        p.elapsed_s = static_cast<double>(now - run_start) / 1e9;
        p.run_s = run_s;
        p.iops = static_cast<double>(ios - last_ios) / (static_cast<double>(now - last_ns) / 1e9);
        p.round = rc.round;
        p.rounds = rc.rounds;
        p.eta_s = eta_s(rc, now, p.elapsed_s, run_s);
        last_ios = ios;
        last_ns = now;
        lk.unlock();
        rc.progress(p);
        lk.lock();
    }
    return windows;
}

// The jobs' figures as one: the first failure wins; counts and latencies add up.
void merge_jobs(const RunContext& rc, const Crew& crew, const Phases& ph, Outcome& out) {
    out.offload_why = ph.offload_why;
    LatencyHistogram merged;
    for (unsigned i = 0; i < crew.jobs; ++i) {
        const JobState& st = crew.state[i];
        if (!st.unavailable.empty() && out.status == Row::ok) {
            out.status = Row::unavailable;
            out.reason = st.unavailable;
        } else if (!st.failure.empty() && out.status == Row::ok) {
            out.status = Row::failed;
            out.reason = st.failure;
        }
        for (const PhaseResult* r : {&st.ramp, &st.result})
            if (r->error && out.status == Row::ok) {
                out.status = Row::failed;
                out.reason = describe_error(*r, rc.spec.workload.bs);
            }
        if (out.note.empty()) out.note = st.note;
        if (out.ran.empty()) out.ran = st.ran;
        out.ios += st.result.ios;
        out.bytes += st.result.bytes;
        out.writes += st.result.writes;
        out.syscalls += st.result.syscalls;
        out.submits += st.result.submits;
        out.sq_wakeups += st.result.sq_wakeups;
        out.cq_overflows += st.result.cq_overflows;
        out.enter_retries += st.result.enter_retries;
        merged.merge(st.latency);
    }
    if (ph.skip || out.status != Row::ok) return;
    out.interrupted = rc.stop && rc.stop->load(std::memory_order_relaxed);
    out.seconds = static_cast<double>(ph.t1 - ph.t0) / 1e9;
    out.utime_s = seconds_of(ph.r1.ru_utime) - seconds_of(ph.r0.ru_utime);
    out.stime_s = seconds_of(ph.r1.ru_stime) - seconds_of(ph.r0.ru_stime);
    out.nvcsw = ph.r1.ru_nvcsw - ph.r0.ru_nvcsw;
    out.nivcsw = ph.r1.ru_nivcsw - ph.r0.ru_nivcsw;
    if (ph.offload_why.empty())
        out.offloads = static_cast<std::int64_t>(ph.offloads_at_end - ph.offloads_at_start);
    out.workers = ph.kernel_threads.cost(measure::KernelThreadKind::io_worker);
    out.sq_poll = ph.kernel_threads.cost(measure::KernelThreadKind::sq_poll);
    out.lat = {merged.mean(),         merged.quantile(0.50),  merged.quantile(0.90),
               merged.quantile(0.99), merged.quantile(0.999), static_cast<double>(merged.max())};
}

}  // namespace

Outcome run_once(RunContext& rc, const EngineInfo& engine, unsigned depth) {
    const BenchSpec& spec = rc.spec;
    const unsigned jobs = spec.numjobs;
    Outcome out;
    auto state = std::make_unique<JobState[]>(jobs);
    struct FdCloser {
        JobState* s;
        unsigned n;
        ~FdCloser() {
            for (unsigned i = 0; i < n; ++i)
                if (s[i].fd >= 0) ::close(s[i].fd);
        }
    } closer{state.get(), jobs};
    try {
        for (unsigned i = 0; i < jobs; ++i) state[i].fd = rc.target.open_job_fd();
    } catch (const std::exception& e) {
        out.status = Row::failed;
        out.reason = e.what();
        return out;
    }

    Phases ph;
    Crew crew{state.get(), jobs, {}, {}, 0};
    auto on_step = [&]() noexcept { ph.step(rc, state.get(), jobs); };
    std::barrier sync(static_cast<std::ptrdiff_t>(jobs), on_step);

    JobContext base;
    base.workload = &spec.workload;
    base.depth = depth;
    base.batch = spec.batch_for(depth);
    base.jobs = jobs;
    base.buffer_align = std::max<std::uint32_t>(rc.target.direct_align(), 4096);
    base.ring_entries = spec.ring_entries;
    base.sq_thread_idle_ms = spec.sq_thread_idle_ms;

    std::vector<std::thread> threads;
    threads.reserve(jobs);
    for (unsigned i = 0; i < jobs; ++i)
        threads.emplace_back([&, i] { run_job(rc, engine, base, i, crew, ph, sync); });
    out.windows = sample_until_done(rc, depth, crew, ph);
    for (std::thread& t : threads) t.join();

    out.cached_at_start = ph.cached_at_start;
    merge_jobs(rc, crew, ph, out);
    return out;
}

}  // namespace uringkit::engines::detail
