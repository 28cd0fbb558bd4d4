#include "engines/host.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <sstream>

namespace uringkit::engines {

Host describe_host(const std::string& path) {
    Host h;
    static_cast<document::Machine&>(h) = document::describe_machine();
    struct stat st;
    if (!path.empty() && ::stat(path.c_str(), &st) == 0) {
        // A block device is its own device; a file lives on st_dev's mount.
        const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
        if (S_ISBLK(st.st_mode)) {
            h.device = path;
            h.filesystem = "(block device)";
        }
        std::ifstream in("/proc/self/mountinfo");
        std::string line;
        // mountinfo: id parent major:minor root mountpoint options [optional...] - fstype source
        // superopts
        while (std::getline(in, line)) {
            std::istringstream f(line);
            std::string id, parent, majmin, root, mnt;
            f >> id >> parent >> majmin >> root >> mnt;
            const auto colon = majmin.find(':');
            if (colon == std::string::npos) continue;
            const unsigned maj = static_cast<unsigned>(std::stoul(majmin.substr(0, colon)));
            const unsigned min = static_cast<unsigned>(std::stoul(majmin.substr(colon + 1)));
            if (maj != major(dev) || min != minor(dev)) continue;
            if (S_ISBLK(st.st_mode)) {
                h.mount_point = mnt;
                break;
            }
            std::string tok;
            while (f >> tok && tok != "-") {
            }
            f >> h.filesystem >> h.device;
            h.mount_point = mnt;
            // The longest matching mount wins for bind mounts; the first one is the usual case.
            break;
        }
    }
    return h;
}

}  // namespace uringkit::engines
