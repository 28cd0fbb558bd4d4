#pragma once

#include <memory>

#include "source.hpp"

namespace uringkit::replay {

// strace output (-f, -t/-tt/-ttt, -T, -y): the first line has not been
// consumed; TraceReader feeds it.
std::unique_ptr<TraceReader::Source> make_strace_source(std::istream& in, Options options);

}  // namespace uringkit::replay
