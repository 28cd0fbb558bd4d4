// What every trace format shares: reading lines one at a time, turning a
// parse failure into a TraceError (or a counted skip when lenient), the
// table of distinct files, and the summary kept up to date as events leave.
#pragma once

#include <deque>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "replay/trace.hpp"

namespace uringkit::replay {

// Thrown by a format's line parser; Source adds the line number and start.
class LineError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class TraceReader::Source {
public:
    // `first` is the line format detection already consumed, numbered `first_line`.
    Source(std::istream& in, Options options, Format format);
    virtual ~Source() = default;
    Source(const Source&) = delete;
    Source& operator=(const Source&) = delete;

    std::optional<Event> next();
    // Lines read before the source starts (the detected header or first line).
    void feed_first(std::string_view line, std::uint64_t number);

    const std::vector<std::string>& files() const { return files_; }
    const Summary& summary() const { return summary_; }
    TraceReader::State state() const;

protected:
    // Parses one line, calling emit()/skip() for what it finds; throws LineError.
    virtual void parse_line(std::string_view line) = 0;
    // At the end of the input: account for what is still open (unfinished calls).
    virtual void finish() {}
    virtual void add_state(TraceReader::State&) const {}

    void emit(Event e);
    void skip(SkipReason r, std::uint64_t n = 1) {
        summary_.skipped[static_cast<std::size_t>(r)] += n;
    }
    void saw_time(std::int64_t ns);
    void saw_thread(std::uint32_t pid);
    std::uint32_t file_index(const std::string& path);
    std::uint64_t line_number() const { return line_; }

    Summary summary_;

private:
    void parse_checked(std::string_view line);

    std::istream& in_;
    Options options_;
    std::string buffer_;
    std::uint64_t line_ = 0;
    bool ended_ = false;
    std::deque<Event> out_;  // a line can yield several events (close_range)
    std::vector<std::string> files_;
    std::unordered_map<std::string, std::uint32_t> file_ids_;
    std::vector<bool> file_used_;
    std::unordered_set<std::uint32_t> threads_with_events_;
    std::unordered_set<std::uint32_t> threads_seen_;
};

}  // namespace uringkit::replay
