// Unpredictable numbers for query IDs and probes, from the kernel's CSPRNG (getrandom), read in
// blocks so a query costs no system call.
#pragma once

#include <sys/random.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace moat::upstream {

class RandomSource {
public:
    std::uint16_t next_u16() noexcept {
        if (used_ + 2 > block_.size()) {
            refill();
        }
        std::uint16_t v = 0;
        std::memcpy(&v, block_.data() + used_, sizeof v);
        used_ += 2;
        return v;
    }
    /// A number in [0, bound); bound > 0. The bias of the modulo is below 2^-16 for small bounds.
    std::size_t below(std::size_t bound) noexcept {
        const std::uint32_t v = (std::uint32_t{next_u16()} << 16U) | next_u16();
        return static_cast<std::size_t>(v % bound);
    }

private:
    void refill() noexcept {
        std::size_t got = 0;
        while (got < block_.size()) {
            const ssize_t n = getrandom(block_.data() + got, block_.size() - got, 0);
            if (n > 0) {
                got += static_cast<std::size_t>(n);
            }
        }
        used_ = 0;
    }

    std::array<std::uint8_t, 512> block_{};
    std::size_t used_ = 512;
};

}  // namespace moat::upstream
