// The counting replacement of the global operator new/delete is the tests' own
// (tests/support/alloc_counter.hpp), defined here once for the whole dnsmoat-bench binary; the
// replacement costs one relaxed load when counting is off, so the other suites measure the
// ordinary allocator (both end in malloc).
#include "alloc_counter.hpp"

#include "support/alloc_counter.hpp"

namespace moat::bench {

AllocationCounter::AllocationCounter() noexcept {
    g_allocations.store(0);
    g_counting.store(true);
}

AllocationCounter::~AllocationCounter() { g_counting.store(false); }

std::size_t AllocationCounter::stop() noexcept { return Counting::stop(); }

}  // namespace moat::bench
