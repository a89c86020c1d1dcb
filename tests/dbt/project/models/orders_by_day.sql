-- Incremental, insert_overwrite: the first run loads batch 1, a later run rewrites only the
-- order_date partitions that batch 2 touches (2024-04-02 restated, 2024-04-03 new) and keeps
-- 2024-04-01 as it was. (No semicolons in models: dbt-hive splits statements on every one.)
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['order_date']
) }}

select order_id, customer_id, amount, status, order_date
from {{ ref('orders') }}
{% if is_incremental() %}
where batch = 2
{% else %}
where batch = 1
{% endif %}
