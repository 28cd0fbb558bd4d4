// How wide a terminal is, for output laid out to fit it (bench's table).
#pragma once

#include <cstddef>

namespace uringkit::cli {

// The characters a line printed on `fd` may take: the terminal's columns
// (TIOCGWINSZ), or $COLUMNS where the terminal reports none (a serial
// console, a pseudo-terminal nobody sized).  0 when `fd` is not a terminal:
// output to a pipe or a file gets a layout that does not depend on the
// environment it ran in.
std::size_t terminal_columns(int fd);

}  // namespace uringkit::cli
