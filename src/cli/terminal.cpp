#include "cli/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

namespace uringkit::cli {

std::size_t terminal_columns(int fd) {
    if (::isatty(fd) != 1) return 0;
    winsize ws{};
    if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    if (const char* columns = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const unsigned long n = std::strtoul(columns, &end, 10);
        if (end != columns && *end == '\0' && n > 0 && n < 100000) return n;
    }
    return 80;  // a terminal that says nothing: the width every terminal has had
}

}  // namespace uringkit::cli
