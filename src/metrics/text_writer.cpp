#include "moat/metrics/text_writer.hpp"

#include <array>
#include <charconv>
#include <cstdio>

namespace moat::metrics {
namespace {

const char* type_text(Type t) {
    switch (t) {
        case Type::counter: return "counter";
        case Type::gauge: return "gauge";
        case Type::histogram: return "histogram";
    }
    return "untyped";
}

/// HELP text escaping: backslash and newline.
void append_help(std::string& out, std::string_view help) {
    for (const char c : help) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
}

void append_number(std::string& out, double v) {
    std::array<char, 32> buf{};
    const int n = std::snprintf(buf.data(), buf.size(), "%.9g", v);
    out.append(buf.data(), static_cast<std::size_t>(n));
}

void append_number(std::string& out, std::uint64_t v) {
    std::array<char, 24> buf{};
    const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out.append(buf.data(), end);
}

}  // namespace

std::string escape_label_value(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (const char c : value) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '"') {
            out += "\\\"";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

void TextWriter::family(std::string_view name, std::string_view help, Type type) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    append_help(out_, help);
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type_text(type);
    out_ += '\n';
}

void TextWriter::labels(std::initializer_list<Label> labels) {
    if (labels.size() == 0) {
        return;
    }
    out_ += '{';
    bool first = true;
    for (const auto& [key, value] : labels) {
        if (!first) {
            out_ += ',';
        }
        first = false;
        out_ += key;
        out_ += "=\"";
        out_ += escape_label_value(value);
        out_ += '"';
    }
    out_ += '}';
}

void TextWriter::sample(std::string_view name, std::initializer_list<Label> l, double value) {
    out_ += name;
    labels(l);
    out_ += ' ';
    append_number(out_, value);
    out_ += '\n';
}

void TextWriter::sample(std::string_view name, std::initializer_list<Label> l,
                        std::uint64_t value) {
    out_ += name;
    labels(l);
    out_ += ' ';
    append_number(out_, value);
    out_ += '\n';
}

void TextWriter::histogram(std::string_view name, std::string_view help,
                           const LatencyHistogram& h) {
    family(name, help, Type::histogram);
    const std::string bucket = std::string(name) + "_bucket";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= LatencyHistogram::kBoundsUs.size(); ++i) {
        cumulative += h.bucket(i);
        std::string le = "+Inf";
        if (i < LatencyHistogram::kBoundsUs.size()) {
            le.clear();
            append_number(le, static_cast<double>(LatencyHistogram::kBoundsUs[i]) / 1e6);
        }
        sample(bucket, {{"le", le}}, cumulative);
    }
    sample(std::string(name) + "_sum", {}, static_cast<double>(h.sum_us()) / 1e6);
    sample(std::string(name) + "_count", {}, cumulative);
}

}  // namespace moat::metrics
