#include "memory_floor.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "domains.hpp"
#include "memory.hpp"
#include "moat/filter/mapped_array.hpp"
#include "timer.hpp"

namespace moat::bench {
namespace {

constexpr std::size_t kLine = 64;
constexpr std::size_t kHugePage = std::size_t{2} << 20U;

/// An anonymous mapping of whole huge pages, unmapped on scope exit.
class Table {
public:
    explicit Table(std::size_t bytes) : bytes_((bytes + kHugePage - 1) / kHugePage * kHugePage) {
        // Twice the size, so a 2 MiB-aligned interior of `bytes_` exists for huge pages.
        void* p =
            ::mmap(nullptr, 2 * bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            throw std::bad_alloc();
        }
        base_ = static_cast<std::uint8_t*>(p);
        const auto at = reinterpret_cast<std::uintptr_t>(base_);
        // NOLINTNEXTLINE(performance-no-int-to-ptr): the aligned address inside the mapping
        aligned_ = reinterpret_cast<std::uint8_t*>((at + kHugePage - 1) & ~(kHugePage - 1));
        (void)::madvise(aligned_, bytes_, MADV_HUGEPAGE);  // best effort, as for the filter
    }
    Table(const Table&) = delete;
    Table& operator=(const Table&) = delete;
    Table(Table&&) = delete;
    Table& operator=(Table&&) = delete;
    ~Table() { (void)::munmap(base_, 2 * bytes_); }

    /// The slot at the start of cache line `i`.
    [[nodiscard]] std::uint32_t& line(std::size_t i) noexcept {
        return *reinterpret_cast<std::uint32_t*>(aligned_ + i * kLine);
    }
    [[nodiscard]] std::size_t lines() const noexcept { return bytes_ / kLine; }

private:
    std::size_t bytes_;
    std::uint8_t* base_ = nullptr;
    std::uint8_t* aligned_ = nullptr;
};

}  // namespace

double dependent_read_ns(std::size_t bytes, std::size_t steps) {
    Table table(bytes);
    const std::size_t n = table.lines();
    // One random cycle through every line: line order[i] holds the index of line order[i + 1].
    std::vector<std::uint32_t> order(n);
    for (std::size_t i = 0; i < n; ++i) {
        order[i] = static_cast<std::uint32_t>(i);
    }
    Rng rng(0x1A7E9C1ULL);
    rng.shuffle(order);
    for (std::size_t i = 0; i < n; ++i) {
        table.line(order[i]) = order[(i + 1) % n];
    }
    std::array<double, 3> walks{};
    std::uint32_t at = order[0];
    for (double& ns : walks) {
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t s = 0; s < steps; ++s) {
            at = table.line(at);
        }
        const auto t1 = std::chrono::steady_clock::now();
        ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(steps);
    }
    keep(at);
    std::sort(walks.begin(), walks.end());
    return walks[1];
}

Summary timed_read_summary(std::size_t bytes, std::size_t reads) {
    Table table(bytes);
    const std::size_t n = table.lines();
    for (std::size_t i = 0; i < n; ++i) {
        table.line(i) = static_cast<std::uint32_t>(i);  // every page present, as a table's are
    }
    Rng rng(0x5EAD1ULL);
    std::vector<std::uint32_t> lines(reads);
    for (std::uint32_t& line : lines) {
        line = static_cast<std::uint32_t>(rng.below(n));
    }
    Samples samples(reads);
    std::uint32_t sum = 0;
    for (const std::uint32_t line : lines) {
        const Ticks t0 = tick_begin();
        // The fence in tick_end() waits for this load: the sample is the whole trip.
        sum += *static_cast<const volatile std::uint32_t*>(&table.line(line));
        const Ticks t1 = tick_end();
        samples.add(t1 - t0);
    }
    keep(sum);
    return samples.summarize();
}

WriteCosts fresh_page_write_costs(std::size_t bytes) {
    // The builder's own calls (filter/mapped_array.hpp), so the figure is what a rebuild pays.
    const std::size_t mapped = filter::mapping::whole_pages(bytes);
    std::array<WriteCosts, 3> runs{};
    for (WriteCosts& r : runs) {
        void* p = filter::mapping::map(mapped);
        const auto ms_since = [](std::chrono::steady_clock::time_point t0) {
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        };
        auto t0 = std::chrono::steady_clock::now();
        filter::mapping::populate(p, mapped);
        r.populate_ms = ms_since(t0);
        t0 = std::chrono::steady_clock::now();
        std::memset(p, 1, bytes);
        r.first_write_ms = ms_since(t0);
        t0 = std::chrono::steady_clock::now();
        std::memset(p, 2, bytes);
        r.second_write_ms = ms_since(t0);
        keep(static_cast<const volatile std::uint8_t*>(p)[bytes / 2]);
        filter::mapping::unmap(p, mapped);
    }
    const auto median = [&runs](double WriteCosts::*field) {
        std::array<double, 3> v{runs[0].*field, runs[1].*field, runs[2].*field};
        std::sort(v.begin(), v.end());
        return v[1];
    };
    return {median(&WriteCosts::populate_ms), median(&WriteCosts::first_write_ms),
            median(&WriteCosts::second_write_ms)};
}

void report_write_floor(Report& report, std::string_view what, std::size_t bytes) {
    const WriteCosts c = fresh_page_write_costs(bytes);
    // The kernel's page: 4 KiB on x86-64, 16 KiB on a Raspberry Pi 5's kernel.
    const std::size_t page = filter::mapping::whole_pages(1);
    const auto pages =
        static_cast<double>(filter::mapping::whole_pages(bytes)) / static_cast<double>(page);
    report.line(
        format("floor: %.1f MiB of fresh pages (%.*s): populating them costs %.1f ms, "
               "the first write %.1f ms (%.2f us per %zu KiB page), a second write %.1f ms",
               to_mib(static_cast<double>(bytes)), static_cast<int>(what.size()), what.data(),
               c.populate_ms, c.first_write_ms, c.first_write_ms * 1000.0 / pages, page / 1024,
               c.second_write_ms));
}

Summary report_read_floor(Report& report, std::string_view suite, double bytes) {
    const double ns = dependent_read_ns(static_cast<std::size_t>(bytes));
    const Summary alone = timed_read_summary(static_cast<std::size_t>(bytes));
    report.line(
        format("floor: one random read in a table of %.1f MiB (the %.*s structure's size) "
               "costs %.0f ns on this machine (a dependent walk); timed one at a time as "
               "a lookup is: p50 %.3f us, p95 %.3f us",
               to_mib(bytes), static_cast<int>(suite.size()), suite.data(), ns, alone.p50_us,
               alone.p95_us));
    return alone;
}

}  // namespace moat::bench
