// The Prometheus text exposition format (version 0.0.4): families with HELP and TYPE, samples
// with escaped label values, histograms with cumulative buckets, _sum and _count.
//
//   TextWriter w;
//   w.family("dnsmoat_queries_total", "Queries by outcome.", Type::counter);
//   w.sample("dnsmoat_queries_total", {{"outcome", "blocked"}}, 42);
//   std::string body = std::move(w).text();
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "moat/metrics/instruments.hpp"

namespace moat::metrics {

enum class Type : std::uint8_t { counter, gauge, histogram };

using Label = std::pair<std::string_view, std::string_view>;

class TextWriter {
public:
    /// Starts a family. `name` must match [a-zA-Z_:][a-zA-Z0-9_:]* (our names are literals).
    void family(std::string_view name, std::string_view help, Type type);
    void sample(std::string_view name, std::initializer_list<Label> labels, double value);
    void sample(std::string_view name, std::initializer_list<Label> labels, std::uint64_t value);
    /// A whole histogram family of durations, in seconds.
    void histogram(std::string_view name, std::string_view help, const LatencyHistogram& h);

    [[nodiscard]] std::string text() && { return std::move(out_); }

private:
    void labels(std::initializer_list<Label> labels);
    std::string out_;
};

/// Label value escaping of the text format: backslash, double quote and newline.
[[nodiscard]] std::string escape_label_value(std::string_view value);

}  // namespace moat::metrics
