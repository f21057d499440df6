package com.example.billing;

import java.security.MessageDigest;

public class Invoice {
    public static final int VERSION = 2;
    private final long id;

    public Invoice(long id) {
        this.id = id;
    }

    public long getId() {
        return id;
    }

    public String checksum() throws Exception {
        MessageDigest md = MessageDigest.getInstance("MD5");
        return new String(md.digest(String.valueOf(id).getBytes()));
    }
}
