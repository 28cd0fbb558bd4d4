#include "interrupt.hpp"

#include <signal.h>
#include <unistd.h>

namespace uringkit::cli {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};

std::atomic<bool> g_requested{false};
std::atomic<int> g_signal{0};
struct sigaction g_previous[2];
bool g_installed[2] = {false, false};

void on_signal(int sig) {
    int none = 0;
    g_signal.compare_exchange_strong(none, sig);
    g_requested.store(true);
}

}  // namespace

InterruptScope::InterruptScope() {
    static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
                  "the handler may only touch lock-free atomics");
    g_requested.store(false);
    g_signal.store(0);
    for (int i = 0; i < 2; ++i) {
        struct sigaction now {};
        if (::sigaction(kSignals[i], nullptr, &now) != 0 || now.sa_handler == SIG_IGN) continue;
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;  // no SA_RESTART: blocking waits return EINTR and see the flag
        g_installed[i] = ::sigaction(kSignals[i], &sa, &g_previous[i]) == 0;
    }
}

InterruptScope::~InterruptScope() {
    for (int i = 0; i < 2; ++i)
        if (g_installed[i]) {
            ::sigaction(kSignals[i], &g_previous[i], nullptr);
            g_installed[i] = false;
        }
}

const std::atomic<bool>* InterruptScope::flag() const noexcept {
    return &g_requested;
}
bool InterruptScope::requested() const noexcept {
    return g_requested.load();
}
void InterruptScope::stop() noexcept {
    g_requested.store(true);
}
int InterruptScope::signal() const noexcept {
    return g_signal.load();
}
const char* InterruptScope::signal_name() const noexcept {
    switch (g_signal.load()) {
        case SIGINT:
            return "SIGINT";
        case SIGTERM:
            return "SIGTERM";
        default:
            return "";
    }
}

int InterruptScope::exit_status(int status) const {
    const int sig = g_signal.load();
    if (sig == 0) return status;
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);  // not reached: the default action of both signals ends the process
}

}  // namespace uringkit::cli
