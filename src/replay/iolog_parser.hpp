#pragma once

#include <memory>

#include "source.hpp"

namespace uringkit::replay {

// fio's write_iolog output, versions 2 and 3 (fio's HOWTO, "Trace file
// format"); the header line has been read.
std::unique_ptr<TraceReader::Source> make_iolog_source(std::istream& in, Options options,
                                                       Format format);

}  // namespace uringkit::replay
