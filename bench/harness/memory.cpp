#include "memory.hpp"

#include <array>
#include <charconv>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

namespace moat::bench {
namespace {

/// The kB figure of a "VmRSS:    1772 kB" line.
std::optional<double> kb_field(std::string_view line, std::string_view key) {
    if (!line.starts_with(key)) {
        return std::nullopt;
    }
    line.remove_prefix(key.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
        line.remove_prefix(1);
    }
    unsigned long long kb = 0;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), kb);
    if (ec != std::errc{} || ptr == line.data()) {
        return std::nullopt;
    }
    return static_cast<double>(kb) / 1024.0;
}

}  // namespace

ProcessMemory read_process_memory() {
    ProcessMemory m;
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (auto v = kb_field(line, "VmRSS:")) {
            m.rss_mib = v;
        } else if (auto h = kb_field(line, "VmHWM:")) {
            m.hwm_mib = h;
        }
    }
    return m;
}

void trim_heap() noexcept {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

SettledMemory read_after_freeing() {
    SettledMemory m;
    m.raw = read_process_memory();
    trim_heap();
    m.trimmed = read_process_memory();
    return m;
}

bool reset_peak_memory() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return static_cast<bool>(out);
}

std::string mib_text(std::optional<double> mib) {
    if (!mib) {
        return "n/a";
    }
    std::array<char, 32> buf{};
    std::snprintf(buf.data(), buf.size(), "%.1f MiB", *mib);
    return buf.data();
}

}  // namespace moat::bench
