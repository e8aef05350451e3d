# CPack pre-build script: drops the compilers' .comment and .note sections that CPack's
# plain strip keeps (as dh_strip does; lintian: binary-has-unneeded-section).
file(GLOB binaries "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/usr/bin/*")
foreach(binary IN LISTS binaries)
  execute_process(COMMAND objcopy --remove-section=.comment --remove-section=.note ${binary}
                  COMMAND_ERROR_IS_FATAL ANY)
endforeach()
