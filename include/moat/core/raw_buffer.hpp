// A heap buffer of octets that is not zeroed: for receive buffers the kernel fills. Zeroing
// would cost time per buffer (64 KiB per query, once) and make every page of a large buffer
// resident, where only the pages a datagram touches need to be.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace moat {

class RawBuffer {
public:
    explicit RawBuffer(std::size_t size)
        // NOLINTNEXTLINE(modernize-avoid-c-arrays): an array of unknown bound, left unzeroed
        : data_(std::make_unique_for_overwrite<std::uint8_t[]>(size)), size_(size) {}

    [[nodiscard]] std::uint8_t* data() noexcept { return data_.get(); }
    [[nodiscard]] const std::uint8_t* data() const noexcept { return data_.get(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::span<std::uint8_t> span() noexcept { return {data_.get(), size_}; }

private:
    std::unique_ptr<std::uint8_t[]> data_;  // NOLINT(modernize-avoid-c-arrays): left unzeroed
    std::size_t size_;
};

}  // namespace moat
