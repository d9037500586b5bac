# smprof_hide_private_symbols(TARGET VERSION_SCRIPT): compiles TARGET with
# hidden visibility and links it so that its dynamic symbol table holds only
# what VERSION_SCRIPT lists as global: the symbols of every static archive
# linked in (protobuf-lite, zstd, libpfm4, libstdc++ where static) become
# local, and so do the template instances of std:: that our own objects emit.
# tests/exports/ checks the result.
function(smprof_hide_private_symbols target version_script)
  set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden C_VISIBILITY_PRESET hidden
                                             VISIBILITY_INLINES_HIDDEN ON)
  # Debian's archives are compiled as PIE: their direct (PC32) references to
  # libstdc++'s data (typeinfo) must resolve inside the library, so libstdc++
  # is linked in statically, and hidden with the rest. --gc-sections drops
  # what of it we do not use (std::random_device would need glibc 2.36's
  # arc4random). libgcc_s stays shared: its static unwinder needs glibc 2.35.
  # -z text: no relocation may patch the code (a non-PIC object would need one).
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL -Wl,--version-script=${version_script}
                      -Wl,-z,text -Wl,--gc-sections -static-libstdc++)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${version_script})
endfunction()
