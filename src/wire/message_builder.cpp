#include "moat/wire/message_builder.hpp"

#include <algorithm>
#include <cstring>

#include "moat/core/bytes.hpp"
#include "moat/wire/record.hpp"
#include "rdata_layout.hpp"
#include "writer_common.hpp"

namespace moat::wire {
namespace {

using detail::kOptFixed;

/// Offsets of the labels of an uncompressed name; returns the label count.
std::size_t label_offsets(const std::uint8_t* name,
                          std::array<std::uint8_t, kMaxLabels>& at) noexcept {
    std::size_t n = 0;
    for (std::size_t p = 0; name[p] != 0; p += name[p] + 1U) {
        at[n++] = static_cast<std::uint8_t>(p);
    }
    return n;
}

}  // namespace

MessageBuilder::MessageBuilder(std::span<std::uint8_t> buffer, std::size_t max_size) noexcept
    : span_(buffer) {
    reset(max_size);
}

MessageBuilder::MessageBuilder(std::vector<std::uint8_t>* out, std::size_t max_size) noexcept
    : vector_(out) {
    reset(max_size);
}

void MessageBuilder::reset(std::size_t max_size) noexcept {
    limit_ = std::min(max_size, kMaxMessageSize);
    if (vector_ != nullptr) {
        // A small start: most answers are short, and growth doubles (zero-filling only the new
        // part, which resize() must do). A vector still holding a previous message is reused.
        constexpr std::size_t kInitialVectorSize = 64;
        if (vector_->size() < kInitialVectorSize) {
            vector_->resize(std::min(limit_, kInitialVectorSize));
        }
        data_ = vector_->data();
        capacity_ = vector_->size();
    } else {
        limit_ = std::min(limit_, span_.size());
        data_ = span_.data();
        capacity_ = span_.size();
    }
    size_ = kHeaderSize;
    reserved_ = 0;
    header_ = Header{};
    counts_ = {};
    rcode_ = Rcode::noerror;
    rcode_set_ = false;
    last_section_ = Section::answer;
    has_records_ = false;
    stopped_ = limit_ < kHeaderSize;
    tc_ = false;
    has_edns_ = false;
    table_.reset();
    forget_recent();
}

bool MessageBuilder::grow(std::size_t n) noexcept {
    if (n > room()) {
        return false;
    }
    if (size_ + n > capacity_) {
        if (vector_ == nullptr) {
            return false;
        }
        const std::size_t want = std::max(size_ + n + reserved_, std::min(limit_, capacity_ * 2));
        vector_->resize(want);
        data_ = vector_->data();
        capacity_ = want;
    }
    return true;
}

void MessageBuilder::forget_recent() noexcept { recent_count_ = 0; }

void MessageBuilder::remember(const std::uint8_t* name, std::size_t length,
                              std::uint16_t node) noexcept {
    if (node == CompressionTable::kRoot) {
        return;
    }
    RecentName& r = recent_[recent_next_];
    recent_next_ = (recent_next_ + 1) % kRecentNames;
    recent_count_ = std::min(recent_count_ + 1, kRecentNames);
    std::memcpy(r.name.data(), name, length);
    r.length = length;
    r.node = node;
}

bool MessageBuilder::write_recent(const std::uint8_t* name, std::size_t length) noexcept {
    const std::size_t first = name[0];
    for (std::size_t k = 1; k <= recent_count_; ++k) {  // newest first
        const RecentName& r = recent_[(recent_next_ + kRecentNames - k) % kRecentNames];
        if (length == r.length && equal_bytes(name, r.name.data(), length)) {
            if (reserve(2)) {
                put_u16(static_cast<std::uint16_t>(0xC000U | table_.offset(r.node)));
            }
            return true;
        }
        if (length != r.length + first + 1 ||
            !equal_bytes(name + first + 1, r.name.data(), r.length)) {
            continue;
        }
        // One label in front of a recent name. The whole name may be known already: one
        // probe, the same as the last step of a trie walk.
        const std::uint16_t parent = r.node;
        const std::uint32_t key_hash = CompressionTable::hash(parent, name);
        std::uint16_t node = table_.find_hashed(parent, name, data_, key_hash);
        if (node != CompressionTable::kRoot) {
            if (reserve(2)) {
                put_u16(static_cast<std::uint16_t>(0xC000U | table_.offset(node)));
            }
            return true;
        }
        if (!reserve(first + 3)) {
            return true;
        }
        const auto offset = static_cast<std::uint16_t>(size_);
        put_bytes(name, first + 1);
        put_u16(static_cast<std::uint16_t>(0xC000U | table_.offset(parent)));
        node = table_.add_hashed(parent, offset, key_hash);
        remember(name, length, node);
        return true;
    }
    return false;
}

bool MessageBuilder::write_name(const std::uint8_t* name, std::size_t length,
                                bool compress) noexcept {
    if (!compress) {
        if (!reserve(length)) {
            return false;
        }
        put_bytes(name, length);
        return true;
    }
    const std::size_t before = size_;
    if (write_recent(name, length)) {
        return size_ != before;  // nothing written means it did not fit
    }
    // The longest suffix already written, one trie step per label from the right.
    std::array<std::uint8_t, kMaxLabels> at;  // NOLINT(cppcoreguidelines-pro-type-member-init)
    const std::size_t labels = label_offsets(name, at);
    std::uint16_t node = CompressionTable::kRoot;
    std::size_t unmatched = labels;
    std::uint32_t miss_hash = 0;  // hash of the first label not found, reused to add it
    while (unmatched > 0) {
        miss_hash = CompressionTable::hash(node, name + at[unmatched - 1]);
        if (table_.node_count() == 1) {
            break;  // nothing remembered yet (the question): no probe can succeed
        }
        const std::uint16_t child =
            table_.find_hashed(node, name + at[unmatched - 1], data_, miss_hash);
        if (child == CompressionTable::kRoot) {
            break;
        }
        node = child;
        --unmatched;
    }
    const std::size_t prefix = unmatched == labels ? length - 1 : at[unmatched];
    if (!reserve(prefix + (unmatched == labels ? 1 : 2))) {
        return false;
    }
    const std::size_t start = size_;
    put_bytes(name, prefix);
    if (unmatched == labels) {
        data_[size_++] = 0;
    } else {
        put_u16(static_cast<std::uint16_t>(0xC000U | table_.offset(node)));
    }
    // Remember the new labels, the shortest suffix first.
    for (std::size_t i = unmatched; i > 0; --i) {
        const auto offset = static_cast<std::uint16_t>(start + at[i - 1]);
        node = i == unmatched ? table_.add_hashed(node, offset, miss_hash)
                              : table_.add(node, offset, data_);
        if (node == CompressionTable::kRoot) {
            break;  // table full or past the pointer range: shorter suffixes are still known
        }
    }
    remember(name, length, node);
    return true;
}

bool MessageBuilder::write_rdata(RrType type, std::span<const std::uint8_t> rdata,
                                 WireError& error) noexcept {
    const detail::Layout& layout = detail::layout_for(type);
    if (layout.count == 1 && layout.fields[0].kind == detail::FieldKind::fixed) {  // A, AAAA
        if (rdata.size() != layout.fields[0].size) {
            error = WireError{Errc::rdata_length, static_cast<std::uint32_t>(size_)};
            return false;
        }
        if (!reserve(rdata.size())) {
            return false;
        }
        put_bytes(rdata.data(), rdata.size());
        return true;
    }
    if (layout.names != detail::NamePolicy::compress) {
        auto fields = detail::walk_rdata(rdata, 0, rdata.size(), layout, nullptr, true);
        if (!fields) {
            error = fields.error();
            return false;
        }
        if (!reserve(rdata.size())) {
            return false;
        }
        put_bytes(rdata.data(), rdata.size());
        return true;
    }
    // The RFC 1035 types: their layouts are names and fixed fields only, walked here directly.
    std::size_t at = 0;
    for (std::size_t i = 0; i < layout.count; ++i) {
        const std::uint8_t* field = rdata.data() + at;
        const std::size_t left = rdata.size() - at;
        const bool is_name = layout.fields[i].kind == detail::FieldKind::name;
        const std::size_t n =
            is_name ? detail::uncompressed_name_length(field, left) : layout.fields[i].size;
        if (n == 0 || n > left) {
            error = WireError{Errc::rdata_length, static_cast<std::uint32_t>(at)};
            return false;
        }
        if (is_name) {
            if (!write_name(field, n, true)) {
                return false;
            }
        } else {
            if (!reserve(n)) {
                return false;
            }
            put_bytes(field, n);
        }
        at += n;
    }
    if (at != rdata.size()) {
        error = WireError{Errc::rdata_length, static_cast<std::uint32_t>(at)};
        return false;
    }
    return true;
}

std::uint16_t* MessageBuilder::count_for(Section section) noexcept {
    return &counts_[1 + static_cast<std::size_t>(section)];
}

void MessageBuilder::set_rcode(Rcode rcode) noexcept {
    rcode_ = rcode;
    rcode_set_ = true;
}

Status MessageBuilder::set_edns(const EdnsOptions& edns) noexcept {
    const std::size_t need = kOptFixed + edns.options.size();
    if (edns.options.size() > 0xFFFF || size_ + need > limit_) {
        return fail_at(Errc::no_space, size_);
    }
    reserved_ = need;  // replaces any earlier reservation
    edns_ = edns;
    has_edns_ = true;
    return {};
}

Status MessageBuilder::add_question(std::span<const std::uint8_t> qname, RrType qtype,
                                    RrClass qclass) noexcept {
    if (has_records_ || counts_[0] == 0xFFFF) {
        return fail_at(has_records_ ? Errc::bad_argument : Errc::count_overflow, size_);
    }
    if (!detail::is_uncompressed_name(qname)) {
        return fail_at(Errc::bad_argument, size_);
    }
    const std::size_t mark = size_;
    const std::size_t nodes = table_.node_count();
    if (stopped_ || !write_name(qname.data(), qname.size(), true) || !reserve(4)) {
        size_ = mark;
        table_.rollback(nodes);
        forget_recent();
        return fail_at(Errc::no_space, mark);
    }
    put_u16(to_u16(qtype));
    put_u16(to_u16(qclass));
    ++counts_[0];
    return {};
}

Status MessageBuilder::add_record(Section section, std::span<const std::uint8_t> owner, RrType type,
                                  std::uint16_t rclass, std::uint32_t ttl,
                                  std::span<const std::uint8_t> rdata) noexcept {
    if (!detail::is_uncompressed_name(owner)) {
        return fail_at(Errc::bad_argument, size_);
    }
    return add_checked(section, owner.data(), owner.size(), type, rclass, ttl, rdata);
}

Status MessageBuilder::add_checked(Section section, const std::uint8_t* owner,
                                   std::size_t owner_length, RrType type, std::uint16_t rclass,
                                   std::uint32_t ttl,
                                   std::span<const std::uint8_t> rdata) noexcept {
    if (stopped_) {
        return fail_at(Errc::truncated, size_);
    }
    if ((has_records_ && section < last_section_) || type == RrType::opt || rdata.size() > 0xFFFF) {
        return fail_at(Errc::bad_argument, size_);
    }
    std::uint16_t* count = count_for(section);
    if (*count == 0xFFFF) {
        return fail_at(Errc::count_overflow, size_);
    }
    const std::size_t mark = size_;
    const std::size_t nodes = table_.node_count();
    WireError error{Errc::truncated, static_cast<std::uint32_t>(mark)};
    bool ok = write_name(owner, owner_length, true) && reserve(10);
    if (ok) {
        put_u16(to_u16(type));
        put_u16(rclass);
        put_u32(ttl);
        size_ += 2;  // RDLENGTH, patched below
        const std::size_t rdata_start = size_;
        // RFC 2136 deletions carry empty RDATA whatever the type's layout.
        ok = (rdata.empty() && detail::empty_rdata_allowed(rclass, 0)) ||
             write_rdata(type, rdata, error);
        store_u16(data_ + rdata_start - 2, static_cast<std::uint16_t>(size_ - rdata_start));
    }
    if (!ok) {
        size_ = mark;
        table_.rollback(nodes);
        forget_recent();
        if (error.code == Errc::truncated) {
            stopped_ = true;
            tc_ = section != Section::additional;
        }
        return tl::unexpected(error);
    }
    ++*count;
    last_section_ = section;
    has_records_ = true;
    return {};
}

Status MessageBuilder::add(Section section, const Record& record) noexcept {
    return add_checked(section, record.owner.wire().data(), record.owner.length(), record.type,
                       record.rclass, record.ttl, record.rdata);
}

tl::expected<std::span<const std::uint8_t>, WireError> MessageBuilder::finish() noexcept {
    if (limit_ < kHeaderSize) {
        return fail_at(Errc::no_space, 0);
    }
    if (static_cast<unsigned>(rcode_) > 0x0FU && !has_edns_) {
        return fail_at(Errc::bad_argument, 0);
    }
    if (has_edns_) {
        reserved_ = 0;
        const std::size_t need = kOptFixed + edns_.options.size();
        if (!reserve(need) || counts_[3] == 0xFFFF) {
            return fail_at(Errc::no_space, size_);
        }
        data_[size_++] = 0;  // owner: the root
        put_u16(to_u16(RrType::opt));
        put_u16(std::max<std::uint16_t>(edns_.udp_payload_size, kClassicUdpSize));
        const std::uint32_t ext_rcode = (static_cast<unsigned>(rcode_) >> 4U) & 0xFFU;
        put_u32((ext_rcode << 24U) | (static_cast<std::uint32_t>(edns_.version) << 16U) |
                (edns_.dnssec_ok ? 0x8000U : 0U));
        put_u16(static_cast<std::uint16_t>(edns_.options.size()));
        if (!edns_.options.empty()) {
            put_bytes(edns_.options.data(), edns_.options.size());
        }
        ++counts_[3];
        has_edns_ = false;  // written; a second finish() must not add another
    }
    Header out = header_;
    out.qdcount = counts_[0];
    out.ancount = counts_[1];
    out.nscount = counts_[2];
    out.arcount = counts_[3];
    if (tc_) {
        out.set_flag(Header::kTc, true);
    }
    if (rcode_set_) {
        out.set_rcode_low(static_cast<std::uint8_t>(static_cast<unsigned>(rcode_) & 0x0FU));
    }
    out.store(data_);
    if (vector_ != nullptr) {
        vector_->resize(size_);
        capacity_ = size_;
        data_ = vector_->data();
    }
    return std::span<const std::uint8_t>(data_, size_);
}

}  // namespace moat::wire
