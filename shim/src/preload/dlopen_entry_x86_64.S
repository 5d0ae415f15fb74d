/* dlopen(file, mode): call chakrashim_dlopen_prepare(), then jump to the
 * real dlopen it returns, with the caller's arguments and return address
 * untouched (see chakrashim_dlopen_prepare in preload_stub.c for why). */
#if defined(__x86_64__)
        .text
        .globl  dlopen
        .type   dlopen, @function
        .p2align 4
dlopen:
        .cfi_startproc
        endbr64
        pushq   %rdi                    /* file */
        .cfi_adjust_cfa_offset 8
        pushq   %rsi                    /* mode */
        .cfi_adjust_cfa_offset 8
        subq    $8, %rsp                /* 16-byte alignment at the call */
        .cfi_adjust_cfa_offset 8
        call    chakrashim_dlopen_prepare
        addq    $8, %rsp
        .cfi_adjust_cfa_offset -8
        popq    %rsi
        .cfi_adjust_cfa_offset -8
        popq    %rdi
        .cfi_adjust_cfa_offset -8
        jmp     *%rax                   /* tail call: the real dlopen */
        .cfi_endproc
        .size   dlopen, .-dlopen
#endif
        .section .note.GNU-stack,"",@progbits
