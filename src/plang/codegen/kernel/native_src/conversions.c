/* Half-precision conversion helpers that LLVM may call from kernel code on targets without
 * the instructions (FP16 without F16C, BF16 without AVX512-BF16). plang links this file into
 * every JIT session and every persisted kernel library, so no kernel depends on compiler-rt.
 * All rounding is to nearest even; NaN stays a quiet NaN. A 16-bit float travels in a float
 * register, as _Float16 does, for both FP16 and BF16 (the LLVM calling convention). */
#include <stdint.h>
#include <string.h>

typedef _Float16 half_reg; /* a 16-bit value in the low bits of a float register */

static uint32_t f32_bits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static float bits_f32(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
static half_reg reg_of(uint16_t h) { half_reg r; memcpy(&r, &h, 2); return r; }
static uint16_t bits_of(half_reg r) { uint16_t h; memcpy(&h, &r, 2); return h; }

static uint16_t f32_to_bf16_bits(float x) {
    uint32_t u = f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static uint16_t f32_to_f16_bits(float x) {
    uint32_t u = f32_bits(x), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu, h;
    if (a >= 0x47800000u) h = a > 0x7f800000u ? 0x7e00u : 0x7c00u;             /* inf, NaN, overflow */
    else if (a < 0x38800000u) h = f32_bits(bits_f32(a) + 0.5f) - 0x3f000000u;  /* subnormal or 0 */
    else h = (a + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
    return (uint16_t)(h | sign);
}

static float f16_bits_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return bits_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0) return bits_f32(sign) + (sign ? -1.0f : 1.0f) * (float)m * 0x1p-24f;
    return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

/* A double rounded to float toward zero with the last bit set when inexact (round to odd),
 * so that rounding that float to 16 bits is the correctly rounded result of the double. */
static float f64_to_f32_odd(double x) {
    float r = (float)x;
    if ((double)r != x && r == r) {
        uint32_t u = f32_bits(r);
        if (__builtin_fabs((double)r) > __builtin_fabs(x)) u -= 1;
        r = bits_f32(u | 1u);
    }
    return r;
}

half_reg __truncsfbf2(float x) { return reg_of(f32_to_bf16_bits(x)); }
half_reg __truncdfbf2(double x) { return reg_of(f32_to_bf16_bits(f64_to_f32_odd(x))); }
half_reg __truncsfhf2(float x) { return reg_of(f32_to_f16_bits(x)); }
half_reg __truncdfhf2(double x) { return reg_of(f32_to_f16_bits(f64_to_f32_odd(x))); }
float __extendhfsf2(half_reg h) { return f16_bits_to_f32(bits_of(h)); }
double __extendhfdf2(half_reg h) { return (double)f16_bits_to_f32(bits_of(h)); }
float __extendbfsf2(half_reg h) { return bits_f32((uint32_t)bits_of(h) << 16); }
