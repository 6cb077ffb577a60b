#include "moat/wire/wire_error.hpp"

#include <string>

namespace moat::wire {

const char* reason(Errc code) noexcept {
    switch (code) {
        case Errc::short_header: return "message shorter than the 12-byte header";
        case Errc::name_overrun: return "name runs past the end of its data";
        case Errc::bad_label_type: return "unknown label type (0x40 or 0x80)";
        case Errc::forward_pointer:
            return "compression pointer does not point back to an earlier name";
        case Errc::too_many_hops: return "compression pointer chain too long";
        case Errc::name_too_long: return "name longer than 255 octets";
        case Errc::record_overrun: return "question or record header runs past the end";
        case Errc::rdata_overrun: return "RDATA runs past the end of the message";
        case Errc::rdata_length: return "RDATA does not match the layout of its type";
        case Errc::compressed_in_rdata: return "compressed name in RDATA of a type that forbids it";
        case Errc::trailing_data: return "bytes after the last record";
        case Errc::bad_opt: return "OPT record misplaced or repeated";
        case Errc::bad_edns_option: return "EDNS option runs past the OPT RDATA";
        case Errc::bad_svc_param: return "SvcParams out of order or overrunning";
        case Errc::bad_type_bitmap: return "malformed type bitmap";
        case Errc::bad_caa_tag: return "CAA tag empty or not alphanumeric";
        case Errc::bad_text: return "text is not a valid domain name";
        case Errc::no_space: return "no space left in the output";
        case Errc::truncated: return "record does not fit; message truncated";
        case Errc::count_overflow: return "more than 65535 entries in a section";
        case Errc::bad_argument: return "argument not representable in the wire format";
    }
    return "unknown wire error";
}

std::string describe(const WireError& error) {
    return "offset " + std::to_string(error.offset) + ": " + reason(error.code);
}

namespace {
class WireCategory final : public std::error_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "moat.wire"; }
    [[nodiscard]] std::string message(int value) const override {
        return reason(static_cast<Errc>(value));
    }
};
}  // namespace

const std::error_category& wire_category() noexcept {
    static const WireCategory kCategory;
    return kCategory;
}

}  // namespace moat::wire
