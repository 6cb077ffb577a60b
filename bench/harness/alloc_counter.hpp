// Counts heap allocations made while counting is on (the harness runs one thread).
// alloc_counter.cpp replaces every form of the global operator new/delete for the whole
// dnsmoat-bench binary; the replacement costs one relaxed load when counting is off, so the other
// suites' figures are those of the ordinary allocator (both end in malloc).
//
//   AllocationCounter counter;   // counting from here
//   work();
//   std::size_t n = counter.stop();
#pragma once

#include <cstddef>

namespace moat::bench {

class AllocationCounter {
public:
    AllocationCounter() noexcept;
    ~AllocationCounter();
    AllocationCounter(const AllocationCounter&) = delete;
    AllocationCounter& operator=(const AllocationCounter&) = delete;
    AllocationCounter(AllocationCounter&&) = delete;
    AllocationCounter& operator=(AllocationCounter&&) = delete;

    /// Stops counting and returns the allocations counted.
    std::size_t stop() noexcept;
};

}  // namespace moat::bench
