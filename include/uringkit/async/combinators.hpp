// Awaiting several things at once.
//
//     auto [a, b] = co_await async::when_all(read_header(loop), read_body(loop));   // tasks
//     auto first = co_await async::when_any(loop, op::Recv(...), op::Timeout(&ts)); // operations
//     // first.index: the one that completed first; the others were cancelled
//     // and their completions drained before this coroutine resumed.
#pragma once

#include "uringkit/async/loop.hpp"
#include "uringkit/cxx20.hpp"

#include <optional>
#include <tuple>
#include <type_traits>

namespace uringkit::async {

template <std::size_t N>
struct AnyResult {
    std::size_t index = 0;            // the operation that completed first
    std::array<Result, N> results{};  // every one's result (the losers': usually -ECANCELED)
    const Result& first() const noexcept { return results[index]; }
};

namespace detail {

template <class... Ops>
struct AnyAwaiter : ChainAwaiter<false, Ops...> {
    AnyAwaiter(LoopCore* l, const Ops&... o) noexcept : ChainAwaiter<false, Ops...>(l, o...) {
        this->race = true;
    }
    AnyResult<sizeof...(Ops)> await_resume() const noexcept {
        return {this->winner < sizeof...(Ops) ? this->winner : 0, this->results};
    }
};

// Counts the children of a when_all still running; the last one to finish
// resumes the parent.  One extra count is held while they start, so a child
// that finishes at once cannot resume the parent inside its own start.
struct JoinCounter {
    std::size_t left;
    std::coroutine_handle<> parent;
};

struct Joiner {
    struct promise_type {
        JoinCounter* counter = nullptr;
        Joiner get_return_object() noexcept {
            return Joiner{std::coroutine_handle<promise_type>::from_promise(*this)};
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        struct Final {
            bool await_ready() const noexcept { return false; }
            std::coroutine_handle<> await_suspend(
                std::coroutine_handle<promise_type> h) const noexcept {
                JoinCounter* c = h.promise().counter;
                return --c->left == 0 ? c->parent : std::noop_coroutine();
            }
            void await_resume() const noexcept {}
        };
        Final final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); }  // join_one catches
    };
    explicit Joiner(std::coroutine_handle<promise_type> h) noexcept : handle(h) {}
    Joiner(Joiner&& o) noexcept : handle(std::exchange(o.handle, {})) {}
    Joiner(const Joiner&) = delete;
    ~Joiner() {
        if (handle) handle.destroy();
    }
    std::coroutine_handle<promise_type> handle;
};

template <class T>
Joiner join_one(Task<T> task, std::optional<T>& out, std::exception_ptr& error) {
    try {
        out.emplace(co_await std::move(task));
    } catch (...) {
        error = std::current_exception();
    }
}

template <std::size_t N>
struct StartAll {
    std::array<Joiner, N>* joiners;
    JoinCounter* counter;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> parent) const noexcept {
        counter->parent = parent;
        for (Joiner& j : *joiners) {
            j.handle.promise().counter = counter;
            j.handle.resume();
        }
        return --counter->left != 0;  // all done already: go on without suspending
    }
    void await_resume() const noexcept {}
};

}  // namespace detail

// Every task to its end, concurrently (on this thread's loop); then their
// values, or the first exception (by position) once all have finished.
template <class... T>
Task<std::tuple<T...>> when_all(Task<T>... tasks) {
    static_assert(sizeof...(T) > 0, "when_all needs a task");
    static_assert((!std::is_void_v<T> && ...), "when_all takes tasks with a value");
    constexpr std::size_t N = sizeof...(T);
    std::tuple<std::optional<T>...> values;
    std::array<std::exception_ptr, N> errors{};
    detail::JoinCounter counter{N + 1, {}};
    auto joiners = [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<detail::Joiner, N>{
            detail::join_one(std::move(tasks), std::get<I>(values), errors[I])...};
    }
    (std::index_sequence_for<T...>{});
    co_await detail::StartAll<N>{&joiners, &counter};
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    co_return std::apply([](auto&... v) { return std::tuple<T...>(std::move(*v)...); }, values);
}

// The first of the operations to complete; the others are cancelled, and
// this resumes only after every one's final completion (their memory is free
// to go then).  One submission.
template <class... Ops>
detail::AnyAwaiter<Ops...> when_any(Loop& loop, const Ops&... ops) noexcept {
    return {&detail::core(loop), ops...};
}

}  // namespace uringkit::async
