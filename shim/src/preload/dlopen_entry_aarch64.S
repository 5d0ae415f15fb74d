/* dlopen(file, mode) for AArch64; see dlopen_entry_x86_64.S. */
#if defined(__aarch64__)
        .text
        .globl  dlopen
        .type   dlopen, %function
        .p2align 4
dlopen:
        .cfi_startproc
        stp     x29, x30, [sp, #-32]!
        .cfi_def_cfa_offset 32
        .cfi_offset 29, -32
        .cfi_offset 30, -24
        mov     x29, sp
        stp     x0, x1, [sp, #16]
        bl      chakrashim_dlopen_prepare
        mov     x16, x0
        ldp     x0, x1, [sp, #16]
        ldp     x29, x30, [sp], #32
        .cfi_def_cfa_offset 0
        br      x16                     /* tail call: the real dlopen */
        .cfi_endproc
        .size   dlopen, .-dlopen
#endif
        .section .note.GNU-stack,"",%progbits
