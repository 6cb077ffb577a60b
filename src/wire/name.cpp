#include "moat/wire/name.hpp"

#include <cstring>

#include "moat/core/ascii.hpp"

namespace moat::wire {
namespace {

/// ASCII upper-case letters of a word turned to lower case, eight octets at once; octets of
/// 0x80 and above are left as they are. (Length octets, 1..63, are below 'A' and stay too.)
constexpr std::uint64_t lower_word(std::uint64_t w) noexcept {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
    const std::uint64_t low7 = w & ~kHigh;
    const std::uint64_t above_z = low7 + (0x7F - 'Z') * kOnes;    // high bit: octet > 'Z'
    const std::uint64_t from_a = low7 + (0x80 - 'A') * kOnes;     // high bit: octet >= 'A'
    const std::uint64_t upper = (from_a ^ above_z) & ~w & kHigh;  // 'A'..'Z' and below 0x80
    return w | (upper >> 2U);                                     // 0x80 >> 2 == 0x20
}

/// Lower-cases a name stored without compression pointers: one pass over its bytes, eight at a
/// time (the usual case for a question, and the filter's and cache's hot path).
std::size_t copy_lower_contiguous(const std::uint8_t* in, std::size_t length,
                                  std::uint8_t* out) noexcept {
    std::size_t i = 0;
    for (; i + 8 <= length; i += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, in + i, 8);
        w = lower_word(w);
        std::memcpy(out + i, &w, 8);
    }
    for (; i < length; ++i) {
        out[i] = ascii_lower(in[i]);
    }
    return length;
}

/// True when the name's labels follow each other in the message with no compression pointer.
bool is_contiguous(NameView name) noexcept {
    if (name.known_contiguous()) {
        return true;
    }
    const std::uint8_t* p = name.base() + name.offset();
    std::size_t at = 0;
    while (p[at] != 0) {
        if ((p[at] & 0xC0U) != 0) {
            return false;
        }
        at += 1U + p[at];
    }
    return at + 1 == name.length();
}

template <bool Lower>
std::size_t copy_labels(NameView name, std::uint8_t* out) noexcept {
    // A name without pointers (every question) is copied whole, not label by label.
    if (is_contiguous(name)) {
        if constexpr (Lower) {
            return copy_lower_contiguous(name.base() + name.offset(), name.length(), out);
        } else {
            std::memcpy(out, name.base() + name.offset(), name.length());
            return name.length();
        }
    }
    std::uint8_t* w = out;
    for (const auto label : name) {
        *w++ = static_cast<std::uint8_t>(label.size());
        if constexpr (Lower) {
            for (const std::uint8_t c : label) {
                *w++ = ascii_lower(c);
            }
        } else {
            std::memcpy(w, label.data(), label.size());
            w += label.size();
        }
    }
    *w++ = 0;
    return static_cast<std::size_t>(w - out);
}

bool is_plain_text_byte(std::uint8_t c) noexcept {
    return c > 0x20 && c < 0x7F && c != '.' && c != '\\' && c != '"' && c != '(' && c != ')' &&
           c != ';' && c != '@' && c != '$';
}

}  // namespace

std::span<const std::uint8_t> NameView::contiguous_wire() const noexcept {
    if (!is_contiguous(*this)) {
        return {};
    }
    return {base() + offset(), length()};
}

std::size_t NameView::copy_to(std::uint8_t* out) const noexcept {
    return copy_labels<false>(*this, out);
}

std::size_t NameView::copy_lower_to(std::uint8_t* out) const noexcept {
    return copy_labels<true>(*this, out);
}

bool NameView::iequals(NameView other) const noexcept {
    if (length() != other.length() || label_count() != other.label_count()) {
        return false;
    }
    auto a = begin();
    auto b = other.begin();
    for (; a != end(); ++a, ++b) {
        const auto la = *a;
        const auto lb = *b;
        if (la.size() != lb.size() || !ascii_iequal(la.data(), lb.data(), la.size())) {
            return false;
        }
    }
    return true;
}

bool NameView::iequals(std::span<const std::uint8_t> wire) const noexcept {
    if (wire.size() != length()) {
        return false;
    }
    const std::uint8_t* w = wire.data();
    for (const auto label : *this) {
        if (*w != label.size() || !ascii_iequal(w + 1, label.data(), label.size())) {
            return false;
        }
        w += 1 + label.size();
    }
    return *w == 0;
}

std::string NameView::to_text() const {
    if (is_root()) {
        return ".";
    }
    std::string text;
    text.reserve(length() + 8U);
    for (const auto label : *this) {
        for (const std::uint8_t c : label) {
            if (is_plain_text_byte(c)) {
                text.push_back(static_cast<char>(c));
            } else if (c > 0x20 && c < 0x7F) {
                text.push_back('\\');
                text.push_back(static_cast<char>(c));
            } else {
                text.push_back('\\');
                text.push_back(static_cast<char>('0' + c / 100));
                text.push_back(static_cast<char>('0' + c / 10 % 10));
                text.push_back(static_cast<char>('0' + c % 10));
            }
        }
        text.push_back('.');
    }
    return text;
}

tl::expected<Name, WireError> Name::from_text(std::string_view text) noexcept {
    Name name;
    if (text.empty() || text == ".") {
        return name;
    }
    std::size_t size = 1;         // octets used; bytes_[label_start] is the open label's length
    std::size_t label_start = 0;  // where the open label's length octet goes
    std::size_t labels = 0;
    bool open = false;  // the open label has at least one octet
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t at = i;
        if (text[i] == '.') {
            if (!open) {
                return fail_at(Errc::bad_text, at);  // empty label
            }
            name.bytes_[label_start] = static_cast<std::uint8_t>(size - label_start - 1);
            ++labels;
            label_start = size++;
            open = false;
            ++i;
            continue;
        }
        auto value = static_cast<std::uint8_t>(text[i]);
        if (text[i] == '\\') {
            if (i + 1 >= text.size()) {
                return fail_at(Errc::bad_text, at);
            }
            const auto d0 = static_cast<unsigned char>(text[i + 1]);
            if (d0 >= '0' && d0 <= '9') {
                if (i + 3 >= text.size()) {
                    return fail_at(Errc::bad_text, at);
                }
                unsigned v = 0;
                for (std::size_t k = 1; k <= 3; ++k) {
                    const auto d = static_cast<unsigned char>(text[i + k]);
                    if (d < '0' || d > '9') {
                        return fail_at(Errc::bad_text, at);
                    }
                    v = v * 10U + (d - '0');
                }
                if (v > 255) {
                    return fail_at(Errc::bad_text, at);
                }
                value = static_cast<std::uint8_t>(v);
                i += 4;
            } else {
                value = d0;
                i += 2;
            }
        } else {
            ++i;
        }
        if (size - label_start > kMaxLabelLength) {
            return fail_at(Errc::bad_text, at);  // label longer than 63 octets
        }
        if (size + 1 >= kMaxNameLength) {  // one octet must stay for the root label
            return fail_at(Errc::name_too_long, at);
        }
        name.bytes_[size++] = value;
        open = true;
    }
    if (open) {
        name.bytes_[label_start] = static_cast<std::uint8_t>(size - label_start - 1);
        ++labels;
        label_start = size++;
    }
    // label_start now indexes the root label's octet.
    name.bytes_[label_start] = 0;
    name.size_ = static_cast<std::uint8_t>(label_start + 1);
    name.labels_ = static_cast<std::uint8_t>(labels);
    return name;
}

tl::expected<Name, WireError> Name::from_wire(std::span<const std::uint8_t> wire) noexcept {
    Name name;
    std::size_t at = 0;
    std::size_t labels = 0;
    while (true) {
        if (at >= wire.size()) {
            return fail_at(Errc::name_overrun, at);
        }
        const std::uint8_t len = wire[at];
        if (len == 0) {
            break;
        }
        if (len > kMaxLabelLength) {
            return fail_at(Errc::bad_label_type, at);
        }
        at += len + 1U;
        ++labels;
        if (at + 1 > kMaxNameLength) {
            return fail_at(Errc::name_too_long, at);
        }
    }
    if (at + 1 != wire.size()) {
        return fail_at(Errc::trailing_data, at + 1);
    }
    std::memcpy(name.bytes_.data(), wire.data(), wire.size());
    name.size_ = static_cast<std::uint8_t>(wire.size());
    name.labels_ = static_cast<std::uint8_t>(labels);
    return name;
}

Name Name::from_view(NameView view) noexcept {
    Name name;
    name.size_ = static_cast<std::uint8_t>(view.copy_to(name.bytes_.data()));
    name.labels_ = static_cast<std::uint8_t>(view.label_count());
    return name;
}

Name Name::from_view_lower(NameView view) noexcept {
    Name name;
    name.size_ = static_cast<std::uint8_t>(view.copy_lower_to(name.bytes_.data()));
    name.labels_ = static_cast<std::uint8_t>(view.label_count());
    return name;
}

}  // namespace moat::wire
