package com.example.billing;

import java.util.List;
import java.sql.Statement;
import org.springframework.web.bind.annotation.*;
import static org.springframework.http.HttpStatus.CREATED;

@RestController
@RequestMapping("/api/billing")
public class BillingController {
    private final Statement stmt = null;

    /* "@GetMapping(\"/fake\")" in a comment does not count */
    @GetMapping("/{id}")
    public Invoice get(@PathVariable long id) throws Exception {
        String sql = "SELECT * FROM invoices WHERE id = " + id;
        stmt.executeQuery(sql);
        return new Invoice(id);
    }

    @PostMapping
    @ResponseStatus(CREATED)
    public Invoice create(@RequestBody Invoice in) {
        return in;
    }

    @RequestMapping(value = {"/bulk", "/batch"}, method = RequestMethod.PUT)
    public List<Invoice> bulk(@RequestBody List<Invoice> all) {
        return all;
    }

    private void audit(String who) {
        Runtime.getRuntime().exec("logger " + who);
    }
}
