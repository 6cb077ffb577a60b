#include "moat/wire/message_view.hpp"

#include "moat/core/bytes.hpp"

namespace moat::wire {
namespace {

constexpr std::size_t kRecordFixed = 10;  // type, class, TTL, RDLENGTH
constexpr std::size_t kQuestionFixed = 4;

/// Fills `rr` from a record's fixed fields at `fixed`, its RDATA at `rdata_at`; the caller has
/// checked that both fit the message.
void read_fixed(const std::uint8_t* fixed, std::size_t rdata_at, RecordView& rr) noexcept {
    rr.type = static_cast<RrType>(load_u16(fixed));
    rr.rclass = load_u16(fixed + 2);
    rr.ttl = load_u32(fixed + 4);
    rr.rdata_offset = static_cast<std::uint16_t>(rdata_at);
    rr.rdata_length = load_u16(fixed + 8);
}

}  // namespace

tl::expected<std::size_t, WireError> skip_records(std::span<const std::uint8_t> msg,
                                                  std::size_t pos, std::size_t count) noexcept {
    for (std::size_t i = 0; i < count; ++i) {
        auto end = skip_name(msg, pos, msg.size());
        if (!end) {
            return tl::unexpected(end.error());
        }
        pos = *end;
        if (pos + kRecordFixed > msg.size()) {
            return fail_at(Errc::record_overrun, pos);
        }
        const std::size_t rdlength = load_u16(msg.data() + pos + 8);
        pos += kRecordFixed;
        if (pos + rdlength > msg.size()) {
            return fail_at(Errc::rdata_overrun, pos - 2);
        }
        pos += rdlength;
    }
    return pos;
}

tl::expected<MessageView, WireError> MessageView::parse(std::span<const std::uint8_t> bytes,
                                                        ParseOptions options) noexcept {
    // One named result returned on every path, so it is built in the caller's storage field by
    // field. A view assembled elsewhere and copied in would be read back in wide loads right
    // after narrow stores, which stalls on store forwarding and cost more than the parse.
    tl::expected<MessageView, WireError> result(tl::in_place);
    WireError error;
    if (!result->read(bytes, options, error)) {
        result = tl::unexpected(error);
    }
    return result;
}

bool MessageView::read(std::span<const std::uint8_t> bytes, ParseOptions options,
                       WireError& error) noexcept {
    if (bytes.size() < kHeaderSize || bytes.size() > kMaxMessageSize) {
        error = WireError{Errc::short_header, 0};
        return false;
    }
    bytes_ = bytes;
    header_ = Header::load(bytes.data());
    use_cache_ = options.suffix_cache;
    std::size_t pos = kHeaderSize;
    if (header_.qdcount > 0) {
        // The first qname can hold no pointer (one must lead strictly backwards, and only the
        // header lies before it), so the usual name is a plain run of labels: walked here in a
        // few instructions per label. Anything unusual takes the full decoder, which also
        // produces the exact error.
        const std::uint8_t* base = bytes.data();
        std::size_t end = kHeaderSize;
        std::size_t labels = 0;
        while (end < bytes.size() && base[end] != 0 && base[end] <= kMaxLabelLength) {
            end += base[end] + 1U;
            ++labels;
        }
        const std::size_t length = end + 1 - kHeaderSize;
        NameView qname;
        std::uint8_t hops = 0;
        if (end < bytes.size() && base[end] == 0 && length <= kMaxNameLength) {
            qname = NameView(base, kHeaderSize, static_cast<std::uint8_t>(length),
                             static_cast<std::uint8_t>(labels), true);
            pos = end + 1;
        } else {
            auto name = decode_name(bytes, pos, bytes.size(), nullptr);
            if (!name) {
                error = name.error();
                return false;
            }
            qname = name->view;
            hops = name->hops;
            pos = name->end;
        }
        if (pos + kQuestionFixed > bytes.size()) {
            error = WireError{Errc::record_overrun, static_cast<std::uint32_t>(pos)};
            return false;
        }
        first_question_.qname = qname;
        first_question_.qtype = static_cast<RrType>(load_u16(bytes.data() + pos));
        first_question_.qclass = static_cast<RrClass>(load_u16(bytes.data() + pos + 2));
        qname_entry_.offset = qname.offset();
        qname_entry_.length = static_cast<std::uint8_t>(qname.length());
        qname_entry_.labels = static_cast<std::uint8_t>(qname.label_count());
        qname_entry_.hops = hops;
        pos += kQuestionFixed;
    }
    if (header_.qdcount > 1) {
        // Rare: more questions. Walked with a cache of their own.
        SuffixCache cache;
        cache.insert(qname_entry_);
        for (std::size_t i = 1; i < header_.qdcount; ++i) {
            auto name =
                decode_name(bytes, pos, bytes.size(), options.suffix_cache ? &cache : nullptr);
            if (!name) {
                error = name.error();
                return false;
            }
            pos = name->end;
            if (pos + kQuestionFixed > bytes.size()) {
                error = WireError{Errc::record_overrun, static_cast<std::uint32_t>(pos)};
                return false;
            }
            pos += kQuestionFixed;
        }
    }
    answer_offset_ = pos;
    return true;
}

RecordRange MessageView::section(Section which) const noexcept {
    const std::array<std::uint16_t, 3> counts{header_.ancount, header_.nscount, header_.arcount};
    std::size_t before = 0;
    for (std::size_t s = 0; s < static_cast<std::size_t>(which); ++s) {
        before += counts[s];
    }
    auto start = skip_records(bytes_, answer_offset_, before);
    if (!start) {
        return RecordRange::failed(start.error());
    }
    return {bytes_, *start, counts, which, which, qname_entry_, use_cache_};
}

RecordRange MessageView::records() const noexcept {
    return {
        bytes_,          answer_offset_,      {header_.ancount, header_.nscount, header_.arcount},
        Section::answer, Section::additional, qname_entry_,
        use_cache_};
}

std::optional<RecordView> MessageView::lone_root_additional() const noexcept {
    if (header_.ancount != 0 || header_.nscount != 0 || header_.arcount != 1) {
        return std::nullopt;
    }
    const std::size_t at = answer_offset_;
    const std::size_t rdata_at = at + 1 + kRecordFixed;  // the root owner is one octet
    if (rdata_at > bytes_.size() || bytes_[at] != 0) {
        return std::nullopt;
    }
    const std::uint8_t* fixed = bytes_.data() + at + 1;
    const std::uint16_t rdata_length = load_u16(fixed + 8);
    if (rdata_at + rdata_length > bytes_.size()) {
        return std::nullopt;
    }
    RecordView rr;
    rr.message = bytes_;
    rr.owner = NameView(bytes_.data(), static_cast<std::uint16_t>(at), 1, 0);
    read_fixed(fixed, rdata_at, rr);
    rr.section = Section::additional;
    return rr;
}

RecordRange::RecordRange(std::span<const std::uint8_t> msg, std::size_t start,
                         std::array<std::uint16_t, 3> counts, Section first, Section last,
                         const SuffixCache::Entry& seed, bool use_cache) noexcept
    : msg_(msg),
      counts_(counts),
      start_(start),
      first_(first),
      last_(last),
      use_cache_(use_cache),
      seed_(seed) {
    current_.message = msg;
    restart();
}

RecordRange RecordRange::failed(WireError error) noexcept {
    RecordRange range({}, 0, {}, Section::answer, Section::answer, SuffixCache::Entry{}, false);
    range.failed_ = error;
    range.error_ = error;
    return range;
}

void RecordRange::restart() noexcept {
    pos_ = start_;
    section_ = first_;
    left_ = counts_[static_cast<std::size_t>(first_)];
    // Not `error_ = failed_`: copying the whole optional right after its pieces were written
    // stalls on store forwarding, and this runs for every range.
    if (failed_) {
        error_ = *failed_;
    } else {
        error_.reset();
    }
}

const RecordView* RecordRange::next() noexcept {
    if (error_) {
        return nullptr;
    }
    while (left_ == 0) {
        if (section_ == last_) {
            return nullptr;
        }
        section_ = static_cast<Section>(static_cast<std::uint8_t>(section_) + 1U);
        left_ = counts_[static_cast<std::size_t>(section_)];
    }
    std::size_t pos = pos_;
    const std::uint8_t* base = msg_.data();
    if (pos < msg_.size() && base[pos] == 0) {
        // The root owner (OPT, the one record of most queries): no decoder call at all.
        current_.owner = NameView(base, static_cast<std::uint16_t>(pos), 1, 0);
        ++pos;
    } else {
        auto owner = decode_name(msg_, pos, msg_.size(), use_cache_ ? cache() : nullptr);
        if (!owner) {
            error_ = owner.error();
            return nullptr;
        }
        current_.owner = owner->view;
        pos = owner->end;
    }
    if (pos + kRecordFixed > msg_.size()) {
        error_ = WireError{Errc::record_overrun, static_cast<std::uint32_t>(pos)};
        return nullptr;
    }
    const std::uint8_t* p = msg_.data() + pos;
    const std::uint16_t rdlength = load_u16(p + 8);
    pos += kRecordFixed;
    if (pos + rdlength > msg_.size()) {
        error_ = WireError{Errc::rdata_overrun, static_cast<std::uint32_t>(pos - 2)};
        return nullptr;
    }
    read_fixed(p, pos, current_);
    current_.section = section_;
    pos_ = pos + rdlength;
    --left_;
    return &current_;
}

}  // namespace moat::wire
