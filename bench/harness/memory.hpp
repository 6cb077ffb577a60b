// The process's memory as the kernel counts it: VmRSS (resident now) and VmHWM (the resident
// peak), from /proc/self/status, and a reset of the peak (`echo 5 > /proc/self/clear_refs`,
// Linux 4.0+) so a later VmHWM is the peak of one phase.
//
// glibc keeps freed heap memory resident (small blocks always; large ones too once a large free
// has raised its mmap threshold), so a VmRSS read depends on what was freed before. trim_heap()
// (malloc_trim) hands every free page back: suites call it before a baseline so one suite's
// garbage is not another's figure, and read_after_freeing() reports VmRSS both ways.
//
// Either may be missing (not Linux, /proc not mounted, clear_refs not writable): the values are
// then empty and print as "n/a", and targets that need them are not judged.
#pragma once

#include <optional>
#include <string>

namespace moat::bench {

struct ProcessMemory {
    std::optional<double> rss_mib;  ///< VmRSS
    std::optional<double> hwm_mib;  ///< VmHWM
};

[[nodiscard]] ProcessMemory read_process_memory();

/// Returns the heap's free pages to the system (glibc malloc_trim; elsewhere nothing).
void trim_heap() noexcept;

/// VmRSS after inputs were freed: as the allocator left it, and after trim_heap().
struct SettledMemory {
    ProcessMemory raw;
    ProcessMemory trimmed;
};
[[nodiscard]] SettledMemory read_after_freeing();

/// Makes VmHWM equal to the current VmRSS. False when the kernel refused.
bool reset_peak_memory();

/// "12.3 MiB", or "n/a".
[[nodiscard]] std::string mib_text(std::optional<double> mib);

/// Bytes as MiB.
[[nodiscard]] inline double to_mib(double bytes) noexcept { return bytes / (1024.0 * 1024.0); }

}  // namespace moat::bench
