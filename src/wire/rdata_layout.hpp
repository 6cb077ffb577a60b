// The RDATA layout of each record type, and one walker that checks RDATA against it.
//
// A layout is a short list of fields. The same walker serves validate(), the typed readers
// (rdata.hpp), decompression into owned records, and the builder (which walks uncompressed RDATA
// to find the names it may compress), so the rules of each type live in one table.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tl/expected.hpp>

#include "moat/wire/name.hpp"
#include "moat/wire/name_decoder.hpp"
#include "moat/wire/types.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::wire::detail {

enum class FieldKind : std::uint8_t {
    name,          ///< a domain name
    fixed,         ///< `size` octets
    char_string,   ///< one <character-string>: length octet + data
    char_strings,  ///< one or more <character-string>s up to the end
    rest,          ///< every remaining octet (possibly none)
    type_bitmap,   ///< NSEC/NSEC3 window blocks up to the end (RFC 4034 §4.1.2)
    edns_options,  ///< (code, length, data) up to the end (RFC 6891 §6.1.2)
    svc_params,    ///< (key, length, value) in strictly increasing key order (RFC 9460 §2.2)
    caa_tag,       ///< length octet 1..255 + alphanumeric tag (RFC 8659 §4.1)
    hash,          ///< length octet >= 1 + data (NSEC3 next hashed owner)
};

/// How names inside a type's RDATA are treated (RFC 3597 §4).
enum class NamePolicy : std::uint8_t {
    compress,         ///< RFC 1035 types: pointers read, and written by the builder
    decompress_only,  ///< RFC 3597's "SHOULD decompress" types: pointers read, never written
    plain,            ///< pointers are an error
};

struct Field {
    FieldKind kind = FieldKind::rest;
    std::uint8_t size = 0;  ///< for `fixed`
};

struct Layout {
    std::array<Field, 6> fields{};
    std::uint8_t count = 0;
    NamePolicy names = NamePolicy::plain;
    std::uint8_t name_fields = 0;  ///< how many fields are names
};

/// The layout for `type`; the opaque layout (one `rest` field) for types it does not know.
const Layout& layout_for(RrType type) noexcept;

/// Where the walker found each field, for the typed readers.
struct FieldSpans {
    std::array<std::uint16_t, 7> at{};  ///< start offset of each field, then the end
    std::array<NameView, 2> names{};    ///< the first two names, in order
};

/// Checks RDATA `msg[pos, pos + length)` against `layout`. Names are decoded (and their limits
/// checked) with `cache` when given. `uncompressed` rejects every pointer, for RDATA that is
/// not inside a message (the builder's input).
tl::expected<FieldSpans, WireError> walk_rdata(std::span<const std::uint8_t> msg, std::size_t pos,
                                               std::size_t length, const Layout& layout,
                                               SuffixCache* cache,
                                               bool uncompressed = false) noexcept;

/// RFC 2136 §2.5 sends records of class NONE or ANY with empty RDATA (deletions); such RDATA is
/// accepted whatever the type's layout.
[[nodiscard]] inline bool empty_rdata_allowed(std::uint16_t rclass, std::size_t length) noexcept {
    return length == 0 && (rclass == to_u16(RrClass::none) || rclass == to_u16(RrClass::any));
}

}  // namespace moat::wire::detail
