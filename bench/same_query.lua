#!/usr/bin/env sysbench
-- dbcompare's classic search run by sysbench: the same prepared statement on the same table
-- (dbcompare_records, as a classic run with --sizes SIZE leaves it), keys drawn uniformly.
sysbench.cmdline.options = {
   size = {"The classic size whose table it reads (unique ids SIZE-1 .. SIZE-N)", "small"},
   records = {"Records of that size", 10000},
}

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   stmt = con:prepare("SELECT id, unique_id, created_by, updated_by, deleted_by, created_at, data "
                         .. "FROM dbcompare_records WHERE unique_id = ?")
   param = stmt:bind_create(sysbench.sql.type.VARCHAR, 32)
   stmt:bind_param(param)
end

function event()
   param:set(sysbench.opt.size .. "-" .. sysbench.rand.uniform(1, sysbench.opt.records))
   stmt:execute()
end

function thread_done()
   stmt:close()
   con:disconnect()
end
