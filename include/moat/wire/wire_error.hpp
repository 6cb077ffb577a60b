// Errors of the wire module: a reason and the byte offset where it was found.
//
// A WireError is two integers, cheap to return on the hot path; the human-readable text is built
// only when someone asks for it (describe()). Converts to std::error_code for callers that mix
// error sources.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>
#include <tl/expected.hpp>

namespace moat::wire {

enum class Errc : std::uint8_t {
    short_header = 1,     ///< fewer than 12 bytes
    name_overrun,         ///< a name runs past the end of the message or its RDATA
    bad_label_type,       ///< label type 0x40 or 0x80 (RFC 6891 §5 retired extended labels)
    forward_pointer,      ///< a pointer not strictly backwards, or into the header
    too_many_hops,        ///< a compression chain longer than kMaxPointerHops
    name_too_long,        ///< more than 255 octets uncompressed
    record_overrun,       ///< a question or record header runs past the end
    rdata_overrun,        ///< RDLENGTH runs past the end of the message
    rdata_length,         ///< RDATA fields do not fill RDLENGTH exactly
    compressed_in_rdata,  ///< a pointer inside RDATA of a type that forbids compression
    trailing_data,        ///< bytes after the last record announced by the header
    bad_opt,              ///< OPT not in additional, not at the root, or more than one
    bad_edns_option,      ///< an EDNS option runs past the OPT RDATA
    bad_svc_param,        ///< SvcParams out of order or overrunning
    bad_type_bitmap,      ///< NSEC/NSEC3 window blocks malformed (RFC 4034 §4.1.2)
    bad_caa_tag,          ///< CAA tag empty or not alphanumeric (RFC 8659 §4.1)
    bad_text,             ///< a presentation-format name that cannot be a DNS name
    no_space,             ///< the builder's buffer or size limit is reached
    truncated,            ///< a record did not fit, so the builder set TC and stopped
    count_overflow,       ///< more than 65535 entries in one section
    bad_argument,         ///< a caller passed a value the format cannot carry
};

/// The first error found and where. `offset` is a byte offset into the message (or text).
struct WireError {
    Errc code{};
    std::uint32_t offset = 0;

    friend bool operator==(const WireError&, const WireError&) = default;
};

/// The failure a parser or builder returns: `return fail_at(Errc::name_overrun, pos);`.
inline tl::unexpected<WireError> fail_at(Errc code, std::size_t at) noexcept {
    return tl::unexpected(WireError{code, static_cast<std::uint32_t>(at)});
}

/// The outcome of an operation that returns nothing but may fail, packed into one integer: 0 for
/// success, else the Errc and the offset. Used instead of tl::expected<void, WireError>, which GCC
/// returns through a stack slot written byte by byte and read back wide: that load stalls on
/// store forwarding, and on the builder's per-record calls the stall cost more than the work.
/// Reads like an expected: `if (!status) use(status.error());`.
class [[nodiscard]] Status {
public:
    Status() noexcept = default;
    /// A failure (the form `return tl::unexpected(error);` produces).
    Status(tl::unexpected<WireError> failure) noexcept  // NOLINT(google-explicit-constructor)
        : bits_((static_cast<std::uint64_t>(failure.value().code) << 32U) |
                failure.value().offset) {}

    [[nodiscard]] bool has_value() const noexcept { return bits_ == 0; }
    explicit operator bool() const noexcept { return bits_ == 0; }
    /// The error; only meaningful when has_value() is false.
    [[nodiscard]] WireError error() const noexcept {
        return WireError{static_cast<Errc>(bits_ >> 32U), static_cast<std::uint32_t>(bits_)};
    }

private:
    std::uint64_t bits_ = 0;
};

/// A short fixed phrase for `code`, e.g. "compression pointer does not point backwards".
[[nodiscard]] const char* reason(Errc code) noexcept;

/// "offset 57: compression pointer does not point backwards". Allocates; not for the hot path.
[[nodiscard]] std::string describe(const WireError& error);

[[nodiscard]] const std::error_category& wire_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(Errc code) noexcept {
    return {static_cast<int>(code), wire_category()};
}

}  // namespace moat::wire

template <>
struct std::is_error_code_enum<moat::wire::Errc> : std::true_type {};
