// fmt's compiled part (what libfmt.so holds), built into a static library
// from the installed headers, so that no uringkit program loads libfmt.so
// and, through it, libstdc++.so and libgcc_s.so.  Why it matters: the
// `uringkit` command is often a whole copy of one file (a reflink, a small
// file), and there start-up is the cost.  libgcc_s.so's constructor
// (__cpu_indicator_init) runs CPUID, which traps to the hypervisor in a VM:
// on the 2-core development VM it was 40% of a 4-byte `uringkit cp`, and
// with these three libraries not loaded that copy fell from 1.97 ms to 1.44
// ms against coreutils' 1.37 ms (perf stat -r 300, Linux 6.18).
//
// format-inl.h defines the non-template functions (FMT_FUNC is empty when
// FMT_HEADER_ONLY is not set); the templates that format.h declares
// `extern template` are instantiated here, for char and wchar_t.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
