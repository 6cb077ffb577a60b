// The Prometheus text format: families, labels with escaping, integer and fractional values,
// histograms with cumulative buckets in seconds; and the instruments' single-writer updates.
#include "moat/metrics/text_writer.hpp"

#include <gtest/gtest.h>

namespace moat::metrics {
namespace {

TEST(TextWriter, WritesFamiliesAndSamples) {
    TextWriter w;
    w.family("dnsmoat_queries_total", "Queries answered,\nby outcome.", Type::counter);
    w.sample("dnsmoat_queries_total", {{"outcome", "blocked"}}, std::uint64_t{42});
    w.sample("dnsmoat_queries_total", {{"outcome", "a\"b\\c\nd"}, {"x", "y"}}, std::uint64_t{0});
    w.family("dnsmoat_up", "Always 1.", Type::gauge);
    w.sample("dnsmoat_up", {}, 1.5);
    EXPECT_EQ(std::move(w).text(),
              "# HELP dnsmoat_queries_total Queries answered,\\nby outcome.\n"
              "# TYPE dnsmoat_queries_total counter\n"
              "dnsmoat_queries_total{outcome=\"blocked\"} 42\n"
              "dnsmoat_queries_total{outcome=\"a\\\"b\\\\c\\nd\",x=\"y\"} 0\n"
              "# HELP dnsmoat_up Always 1.\n"
              "# TYPE dnsmoat_up gauge\n"
              "dnsmoat_up 1.5\n");
}

TEST(TextWriter, HistogramBucketsAreCumulativeAndInSeconds) {
    LatencyHistogram h;
    h.observe(10);       // <= 50 us
    h.observe(50);       // <= 50 us (bounds are inclusive)
    h.observe(51);       // <= 100 us
    h.observe(7000000);  // above every bound
    TextWriter w;
    w.histogram("dnsmoat_query_duration_seconds", "Time to answer.", h);
    const std::string text = std::move(w).text();
    EXPECT_NE(text.find("# TYPE dnsmoat_query_duration_seconds histogram\n"), std::string::npos);
    EXPECT_NE(text.find("dnsmoat_query_duration_seconds_bucket{le=\"5e-05\"} 2\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("dnsmoat_query_duration_seconds_bucket{le=\"0.0001\"} 3\n"),
              std::string::npos);
    EXPECT_NE(text.find("dnsmoat_query_duration_seconds_bucket{le=\"5\"} 3\n"), std::string::npos);
    EXPECT_NE(text.find("dnsmoat_query_duration_seconds_bucket{le=\"+Inf\"} 4\n"),
              std::string::npos);
    EXPECT_NE(text.find("dnsmoat_query_duration_seconds_sum 7.000111\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("dnsmoat_query_duration_seconds_count 4\n"), std::string::npos);
}

TEST(Instruments, AHistogramTakesManyObservationsOfOneDurationAtOnce) {
    LatencyHistogram h;
    h.observe(60, 3);  // the answers of one batch
    h.observe(20);
    EXPECT_EQ(h.bucket(0), 1U);
    EXPECT_EQ(h.bucket(1), 3U);
    EXPECT_EQ(h.sum_us(), 200U);
}

TEST(Instruments, CountersAndPeaks) {
    Counter c;
    c.add();
    c.add(41);
    EXPECT_EQ(c.value(), 42U);
    PeakGauge g;
    g.set(3);
    g.set(9);
    g.set(2);
    EXPECT_EQ(g.value(), 2U);
    EXPECT_EQ(g.peak(), 9U);
}

}  // namespace
}  // namespace moat::metrics
