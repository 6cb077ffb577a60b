// Domain names: a zero-copy view of a validated name inside a message, and an owning name.
//
// NameView points into bytes it does not own (a received message, or a Name). It is created only
// by the name decoder after the name passed every limit, so walking its labels needs no checks:
// pointers are followed blindly and always end at the root label. The viewed bytes must outlive
// the view.
//
// Name owns an uncompressed wire-form name in fixed inline storage (no heap), so it can be built
// on the stack on the hot path.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "moat/wire/types.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::wire {

/// Iterates the labels of a validated name, following compression pointers. Yields each label's
/// bytes without the length octet; the root label is not yielded.
class LabelIterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = std::span<const std::uint8_t>;
    using difference_type = std::ptrdiff_t;

    LabelIterator() = default;
    LabelIterator(const std::uint8_t* base, const std::uint8_t* at) noexcept
        : base_(base), at_(resolve(base, at)) {}

    [[nodiscard]] value_type operator*() const noexcept { return {at_ + 1, *at_}; }
    LabelIterator& operator++() noexcept {
        at_ = resolve(base_, at_ + 1 + *at_);
        return *this;
    }
    void operator++(int) noexcept { ++*this; }
    bool operator==(std::default_sentinel_t /*end*/) const noexcept { return *at_ == 0; }

    /// Follows pointers until `at` is a length octet. Only valid on validated names.
    [[nodiscard]] static const std::uint8_t* resolve(const std::uint8_t* base,
                                                     const std::uint8_t* at) noexcept {
        while ((*at & 0xC0U) == 0xC0U) {
            at = base + (((*at & 0x3FU) << 8U) | at[1]);
        }
        return at;
    }

private:
    const std::uint8_t* base_ = nullptr;
    const std::uint8_t* at_ = nullptr;
};

class NameView {
    static constexpr std::array<std::uint8_t, 1> kRootWire{0};

public:
    /// The root name over a static byte.
    NameView() noexcept : base_(kRootWire.data()) {}
    /// `base` is the start of the message (pointer targets are relative to it); `offset` is where
    /// the name starts. Only the decoder and Name create views, after validation. `contiguous`:
    /// the creator knows the name has no compression pointer (it walked it, or owns it), which
    /// spares copies and contiguous_wire() a walk of their own.
    NameView(const std::uint8_t* base, std::uint16_t offset, std::uint8_t length,
             std::uint8_t labels, bool contiguous = false) noexcept
        : base_(base),
          meta_(offset | (static_cast<std::uint32_t>(length) << 16U) |
                (static_cast<std::uint32_t>(labels) << 24U) | (contiguous ? kContiguousBit : 0U)) {}

    /// Uncompressed length in octets, root label included (1..255).
    [[nodiscard]] std::size_t length() const noexcept { return (meta_ >> 16U) & 0xFFU; }
    /// Number of labels, root excluded (0..127).
    [[nodiscard]] std::size_t label_count() const noexcept { return (meta_ >> 24U) & 0x7FU; }
    /// True when the view's creator knew the name to have no compression pointer; false also
    /// when it did not know (the name may still have none).
    [[nodiscard]] bool known_contiguous() const noexcept { return (meta_ & kContiguousBit) != 0; }
    [[nodiscard]] bool is_root() const noexcept { return label_count() == 0; }
    /// Offset of the first byte of the name in the message.
    [[nodiscard]] std::uint16_t offset() const noexcept {
        return static_cast<std::uint16_t>(meta_);
    }
    [[nodiscard]] const std::uint8_t* base() const noexcept { return base_; }

    [[nodiscard]] LabelIterator begin() const noexcept { return {base_, base_ + offset()}; }
    [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }

    /// The name's own octets in the message when it has no compression pointer (a question's
    /// name in every real query), so that it can be read in place; else an empty span.
    [[nodiscard]] std::span<const std::uint8_t> contiguous_wire() const noexcept;
    /// Writes the uncompressed wire form into `out` (which must hold length() bytes) and
    /// returns the number of bytes written.
    std::size_t copy_to(std::uint8_t* out) const noexcept;
    /// As copy_to, with ASCII letters lower-cased (the canonical form for keys and lookups).
    std::size_t copy_lower_to(std::uint8_t* out) const noexcept;

    /// Case-insensitive equality (RFC 4343).
    [[nodiscard]] bool iequals(NameView other) const noexcept;
    /// Case-insensitive equality with an uncompressed wire-form name.
    [[nodiscard]] bool iequals(std::span<const std::uint8_t> wire) const noexcept;

    /// Presentation format with a trailing dot ("www.example.com."); "." for the root.
    [[nodiscard]] std::string to_text() const;

private:
    /// In meta_, above the label count (at most 127, seven bits).
    static constexpr std::uint32_t kContiguousBit = 1U << 31U;

    const std::uint8_t* base_;
    // Offset (bits 0-15), length (16-23), label count (24-30) and known_contiguous() (31) in one
    // word: written with one store and read with one load, so a view returned through memory
    // never stalls the reader on store forwarding (narrow stores read back as one wide load
    // would).
    std::uint32_t meta_ = (1U << 16U) | kContiguousBit;  // the root: offset 0, length 1, no label
};

/// An owned, uncompressed wire-form name in inline storage. Always valid (at most 255 octets,
/// labels of 1..63 octets, root-terminated).
class Name {
public:
    /// The root name. Only the first octet is written: the octets past length() are never
    /// read, and zeroing all 256 cost a `rep stos` on every query (two names a query, perf).
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): bytes_ past size_ stay unset
    Name() noexcept { bytes_[0] = 0; }

    /// Parses presentation format: labels separated by dots, `\.` and `\DDD` escapes, optional
    /// trailing dot; "." or "" is the root. Names are always absolute.
    static tl::expected<Name, WireError> from_text(std::string_view text) noexcept;
    /// Takes an uncompressed wire-form name that must span `wire` exactly.
    static tl::expected<Name, WireError> from_wire(std::span<const std::uint8_t> wire) noexcept;
    /// Copies a validated view (decompressing it).
    static Name from_view(NameView view) noexcept;
    /// Copies a validated view lower-cased.
    static Name from_view_lower(NameView view) noexcept;

    [[nodiscard]] std::span<const std::uint8_t> wire() const noexcept {
        return {bytes_.data(), size_};
    }
    [[nodiscard]] std::size_t length() const noexcept { return size_; }
    [[nodiscard]] std::size_t label_count() const noexcept { return labels_; }
    [[nodiscard]] NameView view() const noexcept {
        return {bytes_.data(), 0, size_, labels_, true};
    }
    [[nodiscard]] std::string to_text() const { return view().to_text(); }

    /// Case-insensitive, as DNS compares names.
    friend bool operator==(const Name& a, const Name& b) noexcept {
        return a.view().iequals(b.wire());
    }

private:
    std::array<std::uint8_t, kMaxNameLength> bytes_;  // [0, size_) set
    std::uint8_t size_ = 1;
    std::uint8_t labels_ = 0;
};

}  // namespace moat::wire
